"""memhtml's ``doctor`` in headctl: the real ``headctl`` in a subprocess against a real daemon on
a real store with a dangling link, a link to nothing, an untyped entity, an overdue task and an
orphan state row; ``--fix`` repairs the links in one commit and prunes the row."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support.daemon import Daemon, headctl, short_socket_dir, wait_for
from support.git import git
from support.memory import memory_html
from support.stores import make_store

TARGET = "areas/inbox/target.html"
SOURCE = "areas/inbox/source.html"
LONELY = "areas/inbox/lonely.html"
TASK = "areas/inbox/tasks/late.html"
FILES = {
    TARGET: memory_html("Target", "The target holds a fact."),
    SOURCE: memory_html("Source", "The source links out.", links=(("relates_to", "/" + TARGET),)),
    LONELY: memory_html(
        "Lonely",
        "The lonely one links to nothing.",
        links=(("supports", "/areas/inbox/never-was.html"),),
        entities=("checkout-api",),
    ),
    TASK: memory_html(
        "Late", "Late is a task.", memory_type="task", task_status="todo",
        metas={"memhtml-due": "2020-01-01"},
    ),
}  # fmt: skip


def _ctl(store: Path, sock: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return headctl("--store", str(store), "--socket", str(sock), *argv)


def _json(store: Path, sock: Path, *argv: str) -> Any:
    done = _ctl(store, sock, "--json", *argv)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_doctor_reports_then_fixes_what_needs_no_decision(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, FILES)
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    daemon.wait_ready()
    sock = daemon.socket_path
    try:
        moved = _json(store, sock, "archive", TARGET, "--reason", "gone")["archivePath"]
        assert _json(store, sock, "reinforce", LONELY) is not None
        git(store, "rm", "-q", LONELY)
        git(store, "commit", "-q", "-m", "remove lonely")
        assert wait_for(lambda: _json(store, sock, "status")["records"] == 3, timeout=30)
        report = _json(store, sock, "doctor")
        assert report["healthy"] is False
        assert report["dangling"] == [
            {"srcPath": SOURCE, "rel": "relates_to", "dstPath": TARGET, "rewriteTo": moved}
        ]
        assert report["orphanAccessRows"] == [LONELY]
        assert [t["path"] for t in report["overdueTasks"]] == [TASK]
        assert (report["inboxDepth"], report["inboxTaskDepth"]) == (2, 1)
        assert report["untypedEntities"] == [] and report["dirty"] == []
        assert {"headSha", "indexFresh", "vectorCoverageFloor", "unparseable"} <= set(report)
        before = int(git(store, "rev-list", "--count", "HEAD"))
        fixed = _json(store, sock, "doctor", "--fix")
        assert fixed["dangling"] == report["dangling"]  # the report is the one found
        repaired = fixed["repaired"]
        assert (repaired["rewritten"], repaired["dropped"], repaired["prunedAccessRows"]) == (
            1,
            0,
            1,
        )
        assert repaired["commitSha"] == git(store, "rev-parse", "HEAD")
        assert int(git(store, "rev-list", "--count", "HEAD")) == before + 1
        assert f'href="/{moved}"' in (store / SOURCE).read_text(encoding="utf-8")
        again = _json(store, sock, "doctor")
        assert again["dangling"] == [] and again["orphanAccessRows"] == []
        shown = _ctl(store, sock, "doctor")
        assert shown.returncode == 0 and "overdue" in shown.stdout
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_doctor_drops_a_link_to_nothing_and_names_an_untyped_entity(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, {LONELY: FILES[LONELY]})
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    daemon.wait_ready()
    try:
        report = _json(store, daemon.socket_path, "doctor", "--fix")
        assert report["dangling"][0]["rewriteTo"] is None
        assert report["untypedEntities"] == [{"entityName": "checkout-api", "files": 1}]
        assert report["repaired"]["dropped"] == 1
        assert "never-was" not in (store / LONELY).read_text(encoding="utf-8")
    finally:
        assert daemon.stop() == 0, daemon.log()
