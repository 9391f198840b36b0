"""headctl's SQLite-plane commands (index, state, traces, recall, reinforce, search --plane
index, session commit provenance): through a real daemon, and on the plane directly when no
daemon serves the store, with the same answers.

Two stores are built from the same files (same commit sha): one served by a daemon, one not.
Every command runs on both and the answers are compared, minus what must differ (absolute paths,
wall-clock stamps).

Mutation notes (each applied once, the named test seen red, then reverted):
- ``elif method in _local_methods()`` -> ``elif False`` -> ``test_the_same_answers_with…``.
- ``progress`` yielding without a ticker -> ``test_a_long_scan_says_so_on_stderr``.
- no ``exclude_plane_dir`` call -> ``test_without_a_daemon_the_plane_files_never_dirty…``.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client import headctl as cli
from support.daemon import Daemon, headctl, short_socket_dir, wait_for
from support.git import git
from support.stores import make_store
from support.transcripts import write_transcript

SID = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f00112233"
VOLATILE = {
    "index_path",
    "state_path",
    "disk_bytes",  # the log files differ while a daemon holds its connection open
    "rebuilt_at",
    "updated_at",
    "indexed_at",
    "trace_root",
    "files",
    "file_path",
    "file_mtime",
}


class Side:
    """One store and the socket headctl is pointed at (served or not)."""

    def __init__(self, store: Path, socket_path: Path, traces: Path) -> None:
        self.store = store
        self.socket_path = socket_path
        self.traces = traces

    def run(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = cli.run(
            ["--store", str(self.store), "--socket", str(self.socket_path), *argv],
            environ={"MEMHTML_TRACE_ROOT": str(self.traces)},
            stdin=io.StringIO(""),
            stdout=out,
            stderr=err,
        )
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out, err = self.run("--json", *argv)
        assert code == 0, err
        return json.loads(out)


class Pair:
    def __init__(self, served: Side, local: Side, daemon: Daemon) -> None:
        self.served = served
        self.local = local
        self.daemon = daemon


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    root = tmp_path_factory.mktemp("plane-ctl")
    sides = []
    for name in ("served", "local"):
        store = root / name / "store"
        make_store(store)
        traces = root / name / "claude"
        write_transcript(traces, SID, "How big is the connection pool? Forty per pod")
        sides.append(Side(store, short_socket_dir() / "head.sock", traces))
    served, local = sides
    daemon = Daemon(
        served.store, served.socket_path, extra=["--trace-root", str(served.traces)]
    ).wait_ready()
    try:
        yield Pair(served, local, daemon)
    finally:
        daemon.stop()


def test_the_same_answers_with_and_without_a_daemon(pair: Pair) -> None:
    served, local = pair.served, pair.local
    assert not local.socket_path.exists()
    for argv in (
        ("index", "rebuild"),
        ("index", "status"),
        ("index", "update"),
        ("state", "export"),
        ("state", "import"),
        ("traces", "index"),
        ("traces", "search", "connection pool"),
        ("traces", "show", SID[:8]),
        ("traces", "index"),
    ):
        a, b = served.json(*argv), local.json(*argv)
        assert _stable(a) == _stable(b), argv
    status = local.json("index", "status")
    assert status["index_path"] == str(local.store / ".memhtml/headd/index.db")
    assert status["files"] == 5 and status["head_sha"] == served.json("index", "status")["head_sha"]
    shown = local.json("traces", "show", SID)
    assert shown["session_id"] == SID and shown["indexed"] is True
    assert local.json("traces", "search", "pool")["hits"][0]["session_id"] == SID


def test_failures_are_one_line_and_the_same_exit_both_ways(pair: Pair) -> None:
    for side in (pair.served, pair.local):
        code, out, err = side.run("traces", "show", "nope-nope")
        assert code == 1 and out == ""
        assert err.startswith("ERR_SESSION_NOT_FOUND: ") and err.count("\n") == 1
        code, _, err = side.run("index", "frobnicate")
        assert code == 2 and err.startswith("ERR_USAGE: ")
    # Only the plane's own commands run without a daemon.
    code, _, err = pair.local.run("recall", "pool")
    assert code == 1 and err.startswith("ERR_DAEMON_UNAVAILABLE")


def test_recall_reinforce_and_index_search_through_the_daemon(pair: Pair) -> None:
    served = pair.served
    pool = "resources/database/connection-pool-size-is-forty.html"
    assert wait_for(lambda: served.json("status")["index"]["updates"] >= 1, 30, 0.05)
    pack = served.json("recall", "connection pool size", "--budget", "500")
    assert pack["entries"][0]["path"] == pool and pack["spent"] <= 500
    hits = served.json("search", "connection pool", "--plane", "index")
    assert hits["plane"] == "index" and hits["hits"][0]["path"] == pool
    code, out, _ = served.run("search", "connection pool", "--plane", "index")
    assert code == 0 and pool in out and "fts" in out
    assert served.json("reinforce", pool, "--signal", "positive")["bumped"] == [pool]
    assert served.json("reinforce", pool)["cooled_down"] == [pool]


def test_session_commit_provenance_flags(pair: Pair) -> None:
    served = pair.served
    session = served.json("session", "open")["session"]
    op = {
        "op": "write",
        "title": "Staging uses eu-west-1",
        "type": "semantic",
        "claim": "The staging cluster runs in eu-west-1.",
    }
    out, errs = io.StringIO(), io.StringIO()
    code = cli.run(
        ["--store", str(served.store), "--socket", str(served.socket_path), "--json"]
        + ["session", "apply", session],
        environ={},
        stdin=io.StringIO(json.dumps([op])),
        stdout=out,
        stderr=errs,
    )
    assert code == 0, errs.getvalue()
    committed = served.json(
        "session", "commit", session, "--trace-session", SID, "--prompt", "p1", "--turn", "u-1"
    )
    assert committed["outcome"] == "committed" and len(committed["paths"]) == 1
    path = committed["paths"][0]
    record = served.json("read", path)["record"]
    assert record["session_id"] == SID and record["prompt_id"] == "p1"
    memories = served.json("traces", "show", SID)["memories"]
    assert [(m["path"], m["link_kind"]) for m in memories] == [(path, "wrote")]


def test_a_long_scan_says_so_on_stderr(pair: Pair, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "PROGRESS_AFTER_S", 0.0)
    code, out, err = pair.local.run("--json", "traces", "index")
    assert code == 0 and json.loads(out)["files_seen"] == 1
    assert "headctl: traces.index still running" in err
    monkeypatch.setattr(cli, "PROGRESS_AFTER_S", 60.0)
    code, _, err = pair.local.run("--json", "traces", "index")
    assert code == 0 and err == ""


def test_the_console_entry_point_runs_without_a_daemon(pair: Pair) -> None:
    done = headctl(
        "--store",
        str(pair.local.store),
        "--socket",
        str(pair.local.socket_path),
        "index",
        "status",
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^head_sha +[0-9a-f]{40}$", done.stdout, re.M)
    assert re.search(r"^files +5$", done.stdout, re.M)


def test_without_a_daemon_the_plane_files_never_dirty_the_checkout(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    git(store, "rm", "-q", ".gitignore")
    git(store, "commit", "-q", "-m", "no ignore file")
    side = Side(store, tmp_path / "no.sock", tmp_path / "claude")
    assert side.json("index", "update")["mode"] == "update"
    assert (store / ".memhtml" / "headd" / "index.db").is_file()
    assert git(store, "status", "--porcelain") == ""
