"""headctl against a real daemon over its socket, and without one (gate, check, failures).

Most cases call ``headctl.run`` in this process (same code path as the console script, real
socket); a few run the real ``headctl`` module in a subprocess to pin the entry point and the
exit status as a shell sees it.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client import headctl as cli
from support.daemon import Daemon, headctl, short_socket_dir
from support.git import external_commit
from support.memory import memory_html
from support.stores import BASE_FILES, make_store

SHORT = "areas/inbox/user-prefers-short-answers.html"


class Ctl:
    def __init__(self, store: Path, socket_path: Path, seed: str, landed: str) -> None:
        self.store = store
        self.socket_path = socket_path
        self.seed = seed
        self.landed = landed

    def run(
        self, *argv: str, stdin: str = "", socket_path: Path | None = None
    ) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        sock = str(socket_path or self.socket_path)
        code = cli.run(
            ["--store", str(self.store), "--socket", sock, *argv],
            environ={},
            stdin=io.StringIO(stdin),
            stdout=out,
            stderr=err,
        )
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str, **kw: Any) -> Any:
        code, out, err = self.run("--json", *argv, **kw)
        assert code == 0, err
        return json.loads(out)


def _twin_commit(store: Path) -> str:
    """A landing that adds a newer twin of every memory: each probe's target falls to rank 2."""
    twins = {}
    for path, html in BASE_FILES.items():
        if "broken" in path:
            continue
        twin = path.replace(".html", "-twin.html")
        twins[twin] = html.replace("2026-11-01T09:00:00Z", "2026-11-20T09:00:00Z")
    return external_commit(store, twins, "twins")


@pytest.fixture(scope="module")
def ctl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ctl]:
    store = tmp_path_factory.mktemp("ctl") / "store"
    seed = make_store(store)
    landed = _twin_commit(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock").wait_ready()
    yield Ctl(store, daemon.socket_path, seed, landed)
    assert daemon.stop() == 0, daemon.log()


def test_status_human_and_json(ctl: Ctl) -> None:
    code, out, err = ctl.run("status")
    assert code == 0 and err == ""
    assert "memories  10 " in out and f"at {ctl.landed[:12]}" in out
    assert ctl.json("status")["records"] == 10


def test_status_memory_accounts_for_the_records_and_postings(ctl: Ctl) -> None:
    memory = ctl.json("status", "--memory")
    assert memory["rss_bytes"] > 0 and memory["peak_bytes"] >= memory["rss_bytes"]
    assert memory["records"]["count"] == 10 and memory["records"]["text_chars"] > 0
    assert memory["postings"]["buckets"] > 0 and memory["postings"]["bytes"] > 0
    index_path = Path(ctl.json("status")["index_path"])
    # index.db is opened (created, migrated, then filled) in the background after READY, so
    # its size moves for a moment: the figure is the file's size once both are read between
    # two of its writes.
    for _ in range(100):
        held = memory["plane"].get("index_db_bytes")
        if held and held == index_path.stat().st_size:
            break
        time.sleep(0.1)
        memory = ctl.json("status", "--memory")
    assert memory["plane"]["index_db_bytes"] == index_path.stat().st_size
    # Unasked, status.memory is the process's figures alone: no walk of the version per poll.
    assert set(ctl.json("status")["memory"]) == {"rss_bytes", "peak_bytes"}
    code, out, _ = ctl.run("status", "--memory")
    assert code == 0 and "rss_bytes" in out and "sha:" not in out


def test_search_read_and_type_filter(ctl: Ctl) -> None:
    hits = ctl.json("search", "short answers", "--limit", "3")["hits"]
    assert hits and "short-answers" in hits[0]["path"]
    code, out, _ = ctl.run("search", "short answers")
    assert code == 0 and "short-answers" in out and "hits at" in out
    typed = ctl.json("search", "short answers", "--type", "semantic")["hits"]
    assert all("short-answers" not in h["path"] for h in typed), "a user_preference is filtered out"
    record = ctl.json("read", SHORT)["record"]
    assert record["path"] == SHORT
    older = ctl.json("search", "short answers", "--at", ctl.seed)
    assert older["sha"] == ctl.seed and len(older["hits"]) == 1


def test_search_mode_reaches_the_daemon(tmp_path: Path) -> None:
    """``--mode seed-exact`` is memhtml's head search (reciprocal-rank scores, at most 2 / 61
    with two arms); without it the daemon answers with the hybrid's bounded fusion, whose best
    hit scores above that; a mode the daemon does not know is a usage error."""
    from headd.head.search import RRF_K

    store = tmp_path / "store"
    seed = make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        local = Ctl(store, daemon.socket_path, seed, seed)
        deadline = time.monotonic() + 20
        while local.json("status")["vectors"]["coverage"] < 1.0:
            assert time.monotonic() < deadline, "the hash embedder's fill did not finish"
            time.sleep(0.1)
        seeded = local.json("search", "postgres orders", "--mode", "seed-exact")
        hybrid = local.json("search", "postgres orders", "--mode", "hybrid")
        assert seeded["hits"] and not seeded["degraded"]
        assert all(0 < hit["score"] <= 2 / (1 + RRF_K) for hit in seeded["hits"])
        assert hybrid["hits"][0]["score"] > 2 / (1 + RRF_K)
        assert local.json("search", "postgres orders")["hits"] == hybrid["hits"]
        code, _, err = local.run("search", "postgres", "--mode", "exact")
        assert code == 2 and "--mode" in err
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_advance_and_a_domain_error(ctl: Ctl) -> None:
    assert ctl.json("advance")["sha"] == ctl.landed
    code, out, err = ctl.run("read", SHORT, "--at", "no-such-ref")
    assert code == 1 and out == ""
    assert err.startswith("ERR_GIT: ") and err.count("\n") == 1


def test_session_lifecycle(ctl: Ctl) -> None:
    path = "areas/inbox/loki-holds-the-logs.html"
    op = {
        "op": "put",
        "path": path,
        "html": memory_html("Loki holds the logs", "Loki holds the logs."),
    }
    opened = ctl.json("session", "open", "--id", "ctl-1")
    assert opened["session"] == "ctl-1"
    applied = ctl.json("session", "apply", "ctl-1", stdin=json.dumps(op) + "\n")
    assert applied["ops"] == 1
    assert [s["session"] for s in ctl.json("session", "list")["sessions"]] == ["ctl-1"]
    committed = ctl.json("session", "commit", "ctl-1", "-m", "loki")
    assert committed["outcome"] == "committed"
    assert ctl.json("read", path)["record"]["title"] == "Loki holds the logs"
    assert ctl.json("session", "close", "ctl-1")["session"] == "ctl-1"
    ctl.landed = committed["sha"]


def test_refused_session_writes_exit_1(ctl: Ctl) -> None:
    ctl.json("session", "open", "--id", "ctl-bad")
    broken = {"op": "put", "path": "areas/inbox/broken.html", "html": "<html></html>"}
    code, out, err = ctl.run("--json", "session", "apply", "ctl-bad", stdin=json.dumps([broken]))
    assert code == 1 and json.loads(out)["violations"]
    assert err.startswith("ERR_INVALID_MEMORY: apply refused") and err.count("\n") == 1
    ctl.json("session", "close", "ctl-bad")
    ctl.json("session", "open", "--id", "ctl-old", "--base", ctl.seed)
    op = {"op": "put", "path": "areas/inbox/old-base.html", "html": memory_html("Old", "Old base.")}
    ctl.json("session", "apply", "ctl-old", stdin=json.dumps(op))
    code, out, err = ctl.run("session", "commit", "ctl-old", "--rebase", "never")
    assert code == 1 and err.startswith("ERR_WRITE_CONFLICT: ")
    assert ctl.json("session", "commit", "ctl-old")["outcome"] == "committed", "auto rebases"
    ctl.json("session", "close", "ctl-old")


def test_gate_passes_through_the_daemon_and_in_process_alike(ctl: Ctl) -> None:
    via_daemon = ctl.json("gate", ctl.seed, ctl.seed)
    assert via_daemon["passed"] is True and via_daemon["mode"] == "head"
    nowhere = short_socket_dir() / "none.sock"
    local = ctl.json("gate", ctl.seed, ctl.seed, socket_path=nowhere)
    assert local == via_daemon


def test_gate_refusal_exits_1_with_the_failure_line(ctl: Ctl) -> None:
    twins = ctl.run("gate", ctl.seed, ctl.landed)
    code, out, err = twins
    assert code == 1
    assert err.startswith("ERR_DISCRIMINATION_FAILED: ") and err.count("\n") == 1
    assert "refused" in out
    nowhere = short_socket_dir() / "none.sock"
    local_code, _, local_err = ctl.run("gate", ctl.seed, ctl.landed, socket_path=nowhere)
    assert (local_code, local_err) == (code, err), "in-process gate says exactly the same"
    code, out, _ = ctl.run("--json", "gate", ctl.seed, ctl.landed, "--tolerance", "0.02")
    report = json.loads(out)
    assert code == 1 and report["passed"] is False and report["mrr"] < report["floor"]


def test_usage_errors_exit_2(ctl: Ctl) -> None:
    code, _, err = ctl.run("search")
    assert code == 2 and err.startswith("ERR_USAGE: ")
    code, _, err = ctl.run("frobnicate")
    assert code == 2
    code, _, err = ctl.run("search", "x", "--limit", "0")
    assert code == 2 and err.startswith("ERR_INVALID_PARAMS: ")


def test_no_daemon_is_a_runtime_failure(ctl: Ctl) -> None:
    code, _, err = ctl.run("status", socket_path=short_socket_dir() / "none.sock")
    assert code == 1 and err.startswith("ERR_DAEMON_UNAVAILABLE: ")


def test_check_delegates_to_the_parser_and_needs_no_daemon(ctl: Ctl, tmp_path: Path) -> None:
    good = ctl.store / SHORT
    bad = tmp_path / "bad.html"
    bad.write_text(BASE_FILES["areas/inbox/broken-memory.html"])
    code, out, _ = ctl.run("--json", "check", str(good), socket_path=tmp_path / "none.sock")
    assert code == 0
    assert json.loads(out)[0]["path"] == SHORT and json.loads(out)[0]["ok"] is True
    code, _, _ = ctl.run("check", str(good), str(bad))
    assert code == 1


def test_the_console_entry_point_as_a_shell_sees_it(ctl: Ctl) -> None:
    env = {"MEMHTML_ROOT": str(ctl.store), "HEADD_SOCKET": str(ctl.socket_path)}
    done = headctl("--json", "status", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["store"] == str(ctl.store)
    done = headctl("gate", ctl.seed, ctl.landed, env=env)
    assert done.returncode == 1
    assert done.stderr.startswith("ERR_DISCRIMINATION_FAILED: ")


def test_a_parser_hook_adds_a_command_that_owns_its_run(
    ctl: Ctl, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registration another module uses: a hook adds an argparse subcommand whose
    ``run_agent`` gets the resolved store and socket; the global options work on it too."""
    from headd_client import headctl_commands

    seen: list[tuple[str, str, bool]] = []

    def hook(sub: Any, parser_class: type) -> None:
        p = sub.add_parser("echo-store", help="print the store and socket")
        p.add_argument("--loud", action="store_true", help="shout")

        def run_agent(args: Any, store: Path, sock: Path, *_streams: Any) -> int:
            seen.append((str(store), str(sock), bool(args.json)))
            return 7 if args.loud else 0

        p.set_defaults(run_agent=run_agent)

    monkeypatch.setattr(headctl_commands, "PARSER_HOOKS", [hook])
    assert ctl.run("echo-store", "--json")[0] == 0
    assert seen == [(str(ctl.store), str(ctl.socket_path), True)]
    assert ctl.run("echo-store", "--loud")[0] == 7
    code, _, err = ctl.run("echo-store", "--bogus")
    assert code == 2 and err.startswith("ERR_USAGE: unrecognized arguments: --bogus")
