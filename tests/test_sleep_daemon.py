"""``headctl sleep …`` through a real daemon on a real store: run, review, an agent committing to
main during the review, merge (replayed), status, and a refused merge's exit and report.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``SleepMerge`` dispatch not advancing the follower -> ``test_run_review_merge_status``.
- ``discard_run`` without its ``is_merged`` refusal -> ``test_discard_deletes_the_branch_only``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client import headctl as cli
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.git import git, tip, tree_paths
from support.sleep_store import RUN_DAY, make_sleep_store


class Ctl:
    def __init__(self, store: Path, socket_path: Path) -> None:
        self.store = store
        self.socket_path = socket_path

    def run(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = cli.run(
            ["--store", str(self.store), "--socket", str(self.socket_path), *argv],
            environ={},
            stdin=io.StringIO(""),
            stdout=out,
            stderr=err,
        )
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out, err = self.run("--json", *argv)
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def ctl(tmp_path: Path) -> Iterator[Ctl]:
    store = tmp_path / "store"
    make_sleep_store(store)
    sock = short_socket_dir() / "head.sock"
    daemon = Daemon(store, sock).wait_ready()
    try:
        yield Ctl(store, sock)
    finally:
        daemon.stop()


def _session_write(ctl: Ctl, title: str, claim: str) -> None:
    session = ctl.json("session", "open")["session"]
    op = json.dumps([{"op": "write", "type": "semantic", "title": title, "claim": claim}])
    path = ctl.store.parent / "op.json"
    path.write_text(op)
    ctl.json("session", "apply", session, str(path))
    assert ctl.json("session", "commit", session)["outcome"] == "committed"


def test_run_review_merge_status(ctl: Ctl) -> None:
    assert ctl.json("sleep", "status")["run_id"] is None
    assert ctl.json("status")["last_sleep"] is None
    plan = ctl.json("sleep", "plan", "--date", RUN_DAY)
    assert plan["would_change"] is True
    main_before = tip(ctl.store)
    report = ctl.json("sleep", "run", "--date", RUN_DAY)
    assert report["run_id"] == "sleep/2026-12-04"
    assert tip(ctl.store) == main_before
    code, text, _ = ctl.run("sleep", "review", report["run_id"])
    assert code == 0 and "moved" in text and "sleep(dedup-merge)" in text
    review = ctl.json("sleep", "review", report["run_id"])
    assert review["diff"] is None
    with_diff = ctl.json("sleep", "review", report["run_id"], "--diff")["diff"]
    assert "+++ b/archive/2026/areas/inbox/pool-size-again.html" in with_diff
    assert {f["kind"] for f in review["files"]} >= {"moved", "folded", "archived", "stamped"}
    # an agent writes to main while the run waits for review: it lands on main, not the branch
    _session_write(ctl, "Meanwhile fact", "Agents keep writing during a review.")
    assert tip(ctl.store) != main_before
    assert not any("meanwhile" in p for p in tree_paths(ctl.store, report["head"]))
    merged = ctl.json("sleep", "merge", report["run_id"])
    assert merged["merged"] and merged["replayed"]
    assert merged["head_gate"]["passed"] and merged["retention_gate"]["passed"]
    # the daemon follows the merge at once: reads see the moved memory
    read = ctl.json("read", "resources/billing/billing-retries.html")
    assert read["record"] is not None
    resolved = ctl.json("resolve", "areas/inbox/pool-size-again.html")
    assert resolved["path"] == "areas/inbox/pool-size.html"
    status = ctl.json("sleep", "status")
    assert status["run_id"] == "sleep/2026-12-04" and status["merged"] is True
    assert ctl.json("status")["last_sleep"] == status
    assert git(ctl.store, "status", "--porcelain") == ""
    # the reporting rows of index.db, memhtml's sleep_runs and sleep_phases
    index = ctl.json("status")["index_path"]
    with contextlib.closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as conn:
        runs = conn.execute("SELECT run_id, status, head_sha FROM sleep_runs").fetchall()
        assert runs == [("sleep/2026-12-04", "merged", merged["landed"])]
        phases = dict(conn.execute("SELECT phase, status FROM sleep_phases").fetchall())
    assert phases["entity-resolution"] == "skipped" and phases["dedup-merge"] == "ok"
    assert len(phases) == 17


def test_a_refused_merge_exits_1_and_moves_nothing(ctl: Ctl) -> None:
    report = ctl.json("sleep", "run", "--date", RUN_DAY, "--phases", "preflight,dedup-merge")
    path = "areas/inbox/pool-size.html"
    (ctl.store / path).write_text((ctl.store / path).read_text().replace("forty", "forty-one"))
    git(ctl.store, "commit", "-qam", "hand edit")
    before = tip(ctl.store)
    code, out, err = ctl.run("--json", "sleep", "merge", report["run_id"])
    assert code == 1 and "ERR_" in err
    answer = json.loads(out.splitlines()[0])
    assert answer["merged"] is False and path in answer["conflicts"]
    assert tip(ctl.store) == before
    code, text, _ = ctl.run("sleep", "merge", report["run_id"])
    assert code == 1 and "not merged" in text and f"conflict   {path}" in text
    code, text, _ = ctl.run("sleep", "status")
    assert code == 0 and "sleep/2026-12-04 (awaiting review)" in text
    code, text, _ = ctl.run("sleep", "plan", "--date", RUN_DAY)
    assert code == 0 and "would change the store" in text
    code, text, _ = ctl.run("sleep", "resume", report["run_id"])
    assert code == 0 and "committed earlier" in text and "no model bound" in text


def test_bad_input_is_refused(ctl: Ctl) -> None:
    code, _, err = ctl.run("sleep", "run", "--phases", "nap")
    assert code != 0 and "nap" in err
    code, _, err = ctl.run("sleep", "run", "--date", "yesterday")
    assert code != 0 and "YYYY-MM-DD" in err
    code, _, err = ctl.run("sleep", "review", "sleep/1999-01-01")
    assert code != 0 and "no sleep run" in err
    for hostile in ("sleep/../../main", "main", "sleep/2026-12-04\n", "sleep/2026-12-04/x"):
        code, _, err = ctl.run("sleep", "merge", hostile)
        assert code != 0 and "not a sleep run id" in err, hostile
    assert git(ctl.store, "status", "--porcelain") == ""


def test_discard_deletes_the_branch_only(ctl: Ctl) -> None:
    main_before = tip(ctl.store)
    report = ctl.json("sleep", "run", "--date", RUN_DAY)
    run = report["run_id"]
    assert git(ctl.store, "rev-parse", f"refs/heads/{run}") == report["head"]
    code, text, _ = ctl.run("sleep", "discard", run)
    assert code == 0 and f"{run} discarded" in text and "main is unchanged" in text
    assert git(ctl.store, "branch", "--list", run) == ""
    assert tip(ctl.store) == main_before
    assert git(ctl.store, "status", "--porcelain") == ""
    assert ctl.json("sleep", "status")["runs"] == []
    code, _, err = ctl.run("sleep", "discard", run)  # gone: an unknown id
    assert code != 0 and "no sleep run" in err
    code, _, err = ctl.run("sleep", "discard", "sleep/../../main")
    assert code != 0 and "not a sleep run id" in err
    # a merged run is history: refused, its branch kept
    again = ctl.json("sleep", "run", "--date", RUN_DAY)
    assert ctl.json("sleep", "merge", again["run_id"])["merged"]
    landed = tip(ctl.store)
    code, _, err = ctl.run("sleep", "discard", again["run_id"])
    assert code != 0 and "ERR_SLEEP_RUN_MERGED" in err
    assert git(ctl.store, "rev-parse", f"refs/heads/{again['run_id']}") == again["head"]
    assert tip(ctl.store) == landed


def test_discard_answers_as_typed(ctl: Ctl) -> None:
    report = ctl.json("sleep", "run", "--date", RUN_DAY)
    answer = ctl.json("sleep", "discard", report["run_id"])
    assert answer == {
        "run_id": report["run_id"],
        "head": report["head"],
        "base": report["base"],
        "discarded": True,
    }


def test_memory_status_reports_the_last_sleep(ctl: Ctl) -> None:
    import anyio
    from support.mcp import bridge, structured

    async def status() -> dict[str, Any]:
        async with bridge(ctl.store, ctl.socket_path) as client:
            return structured(await client.call_tool("memory_status", {}))

    assert anyio.run(status)["last_sleep"] is None
    run = ctl.json("sleep", "run", "--date", RUN_DAY)
    last = anyio.run(status)["last_sleep"]
    assert last["run_id"] == run["run_id"] and last["status"] == "review"
    assert last["started_at"].endswith("Z")
    ctl.json("sleep", "merge", run["run_id"])
    assert anyio.run(status)["last_sleep"]["status"] == "merged"


def test_a_daemon_run_reads_live_usage_and_the_vector_cache(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_sleep_store(store)
    sock = short_socket_dir() / "head.sock"
    daemon = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
    try:
        ctl = Ctl(store, sock)
        claim = "The deploy bot posts release notes to the releases channel at {} each day."
        _session_write(ctl, "Release notes bot", claim.format(9))
        _session_write(ctl, "Release notes bot schedule", claim.format(10))
        ctl.json("vectors", "fill")
        fax = "projects/legacy/fax-gateway.html"
        for _ in range(3):
            ctl.json("reinforce", fax)
        report = ctl.json("sleep", "run", "--date", RUN_DAY)
        phases = {p["phase"]: p for p in report["phases"]}
        assert phases["relationship-mining"]["counts"]["vectors"] > 0
        assert phases["state-export"]["counts"]["written"] == 1
        sidecar = git(store, "show", f"{report['head']}:.memhtml/state/access.jsonl")
        assert fax in sidecar
        # The session writes' index entries are written off the answer's path; census writes
        # them at once, so what is left dirty after it would be the sleep run's doing.
        with Client(sock, timeout=30) as client:
            client.call("census")
        assert git(store, "status", "--porcelain") == ""
        pairs = phases["relationship-mining"]["counts"]["pairs"]
        index = ctl.json("status")["index_path"]
        with contextlib.closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as conn:
            mined = conn.execute(
                "SELECT count(*), min(sleep_run) FROM edges WHERE derived = 1"
            ).fetchone()
        assert pairs > 0 and mined == (pairs, report["run_id"])
    finally:
        daemon.stop()
