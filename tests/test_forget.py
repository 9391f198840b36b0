"""``headctl forget PATH`` on a store with a remote: the memory's blob is gone from every ref and
every object of the local repository (its branch rewritten, its archive copy too, the rescue
and remote-tracking refs that held it dropped, the reflogs expired, the objects pruned); the
remote keeps it until ``--push``; a running daemon makes it refuse before anything changes.

Mutation notes (each applied once, the named test seen red, then reverted):
- leave out the ``reflog expire`` -> ``test_the_blob_is_gone_from_every_ref_and_object``.
- keep the rescue and conflict refs that hold it -> the same test.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, headctl, short_socket_dir
from support.git import git, tip
from support.memory import memory_html
from support.stores import Store, make_store

LEAK = "areas/inbox/deploy-key.html"
ARCHIVED = "archive/2026/" + LEAK


def _objects(root: Path) -> set[str]:
    out = git(root, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


@pytest.fixture
def stores(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "store"
    make_store(root)
    store = Store.open(root)
    html = memory_html("Deploy key", "The deploy key is in the note.", body="k3y-material")
    leaked = store.commit({LEAK: html}, "leak")
    blob = git(root, "rev-parse", f"{leaked}:{LEAK}").strip()
    store.commit({LEAK: None, ARCHIVED: html}, "archive it")
    store.commit({"areas/inbox/later.html": memory_html("Later", "A later note.")}, "later")
    git(root, "update-ref", f"refs/headd/rescue/{leaked}", leaked)
    git(root, "update-ref", "refs/headd/conflicts/1", leaked)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    git(root, "fetch", "-q", "origin")
    return root, remote, blob


def _forget(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    sock = short_socket_dir() / "none.sock"
    return headctl("--store", str(root), "--socket", str(sock), "--json", "forget", LEAK, *extra)


def test_the_blob_is_gone_from_every_ref_and_object(stores: tuple[Path, Path, str]) -> None:
    root, remote, blob = stores
    assert blob in _objects(root)
    run = _forget(root)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["paths"] == [ARCHIVED, LEAK]
    assert report["rewritten_refs"] == ["refs/heads/main"]
    assert set(report["dropped_refs"]) >= {"refs/headd/conflicts/1", "refs/remotes/origin/main"}
    assert blob not in _objects(root)
    assert git(root, "log", "--all", "--format=%H", "--", LEAK, ARCHIVED).strip() == ""
    assert not (root / ARCHIVED).exists() and (root / "areas/inbox/later.html").exists()
    assert git(root, "status", "--porcelain").strip() == ""
    assert "origin/main still hold" in run.stderr and "--push" in run.stderr
    assert blob in _objects(remote)  # said, not done: the remote keeps it until --push


def test_push_rewrites_the_remote_with_a_lease(stores: tuple[Path, Path, str]) -> None:
    root, remote, blob = stores
    run = _forget(root, "--push")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["pushed"] == ["origin/main"]
    assert git(remote, "rev-parse", "main").strip() == tip(root)
    assert git(remote, "log", "--all", "--format=%H", "--", LEAK, ARCHIVED).strip() == ""
    assert "every other clone" in run.stderr


def test_refuses_while_a_daemon_holds_the_store(stores: tuple[Path, Path, str]) -> None:
    root, _remote, blob = stores
    before = tip(root)
    sock = short_socket_dir() / "h.sock"
    daemon = Daemon(root, sock).wait_ready()
    try:
        run = headctl("--store", str(root), "--socket", str(sock), "forget", LEAK)
        assert run.returncode == 1 and run.stderr.startswith("ERR_DAEMON_RUNNING")
    finally:
        daemon.stop()
    assert tip(root) == before and blob in _objects(root)


def test_an_unknown_path_and_a_dirty_tree_are_refused(stores: tuple[Path, Path, str]) -> None:
    root, _remote, _blob = stores
    sock = str(short_socket_dir() / "none.sock")
    missing = headctl("--store", str(root), "--socket", sock, "forget", "areas/inbox/none.html")
    assert missing.returncode == 1 and missing.stderr.startswith("ERR_PATH_NOT_FOUND")
    (root / "areas/inbox/later.html").write_text("edited", encoding="utf-8")
    before = tip(root)
    dirty = _forget(root)
    assert dirty.returncode == 1 and "uncommitted" in dirty.stderr
    assert tip(root) == before


def test_a_daemon_starts_on_the_rewritten_store(stores: tuple[Path, Path, str]) -> None:
    """The derived files that held the text are gone and rebuilt: a daemon that served the store
    before the rewrite starts on it after, and knows nothing of the memory."""
    root, _remote, _blob = stores
    sock = short_socket_dir() / "h.sock"
    Daemon(root, sock).wait_ready().stop()  # leaves its index and snapshot behind
    assert _forget(root).returncode == 0
    daemon = Daemon(root, sock).wait_ready()
    try:
        cli = ["--store", str(root), "--socket", str(sock), "--json"]
        assert headctl(*cli, "read", LEAK).returncode == 1
        found = json.loads(headctl(*cli, "search", "deploy key").stdout)["hits"]
        assert all("deploy-key" not in hit["path"] for hit in found)
        assert json.loads(headctl(*cli, "status").stdout)["sha"] == tip(root)
    finally:
        daemon.stop()


def test_a_daemon_following_the_remote_elsewhere_follows_the_rewrite(
    stores: tuple[Path, Path, str],
) -> None:
    """Another clone's daemon follows the remote: after ``forget --push`` it moves to the
    rewritten branch without a restart (no replay of the dropped commits, so the remote never
    gets the memory back), forgets the memory in its head, and its next write lands on top."""
    root, remote, _blob = stores
    other = root.parent / "other"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(other)], check=True)
    sock = short_socket_dir() / "o.sock"
    daemon = Daemon(other, sock, extra=["--remote", "origin", "--fetch-interval", "0.3"])
    daemon.wait_ready()
    try:
        cli = ["--store", str(other), "--socket", str(sock), "--json"]
        assert headctl(*cli, "read", ARCHIVED).returncode == 0
        assert _forget(root, "--push").returncode == 0
        rewritten = tip(root)
        deadline = time.monotonic() + 30
        while tip(other) != rewritten and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tip(other) == rewritten
        assert git(remote, "rev-parse", "main").strip() == rewritten
        assert json.loads(headctl(*cli, "status").stdout)["sha"] == rewritten
        assert headctl(*cli, "read", ARCHIVED).returncode == 1
        assert not (other / ARCHIVED).exists()
        with Client(sock, timeout=30) as client:
            session = client.call("session.open", {})["session"]
            op = {"op": "write", "title": "After", "type": "semantic", "claim": "Written after."}
            client.call("session.apply", {"session": session, "ops": [op]})
            done = client.call("session.commit", {"session": session, "message": "after"})
            assert done["outcome"] == "committed", done
        deadline = time.monotonic() + 30
        while git(remote, "rev-parse", "main").strip() == rewritten and time.monotonic() < deadline:
            time.sleep(0.1)
        assert git(remote, "rev-list", "--count", f"{rewritten}..main").strip() == "1"
        assert git(remote, "log", "main", "--format=%H", "--", LEAK, ARCHIVED).strip() == ""
    finally:
        daemon.stop()
