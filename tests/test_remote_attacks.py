"""A collaborator who can push attacks a follower: nothing pushed may run, forge or wedge.

Each attack is a commit a normal checkout refuses, made with ``git mktree``/``commit-tree`` and
put on the bare hub's branch with ``update-ref`` (``support.attack``); the follower is a clone
driven one round at a time through the real ``git`` and the head core. Checked for every one:
the round fails and says which commit, which path and why; the branch and the work tree do not
move; nothing lands in ``.git`` or in headd's private state; ``git fsck --strict`` stays clean;
a local commit made afterwards is kept. Guards seen failing when broken:

- the tree check removed from the round -> every ``refused-tree`` case writes its path (the
  ``.memhtml/headd/snapshots`` one plants a snapshot, the 300-byte name fails as ``checkout``);
- ``FSCK_CONFIG`` dropped from the fetch -> the ``.git`` cases enter the object store and
  ``git fsck --strict`` fails;
- the catch-all in ``RemoteSync.round`` removed -> a checkout failure escapes the round and
  ``last_error`` stays None.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pygit2
import pytest
from headd_client import Client
from support.attack import BLOB, EXEC, GITLINK, LINK, attack_commit, blob, mktree
from support.daemon import Daemon, headctl, short_socket_dir, wait_for
from support.git import external_commit, git
from support.memory import memory_html
from support.remote import fsck, hub_and_follower, sync_of
from support.stores import make_store

from headd.remote import quarantine
from headd.remote.tree_check import MAX_DEPTH, TreeJudge

HOOK = b"#!/bin/sh\ntouch pwned\n"


@pytest.fixture
def hub(tmp_path: Path) -> tuple[Path, Path]:
    """(bare hub, follower clone), both at the seed commit."""
    return hub_and_follower(tmp_path)


def work_files(store: Path) -> set[str]:
    """Every file under the store, ``.git`` included, as relative paths."""
    return {str(p.relative_to(store)) for p in store.rglob("*") if p.is_file() or p.is_symlink()}


#: (id, files of the attack commit, the kinds that may refuse it).
ATTACKS: list[tuple[str, dict[bytes, tuple[str, bytes]], set[str]]] = [
    ("dotgit-hook", {b".git/hooks/pre-push": (EXEC, HOOK)}, {"bad-objects"}),
    ("dotgit-upper", {b".GIT/hooks/pre-push": (EXEC, HOOK)}, {"bad-objects"}),
    ("dotgit-ntfs", {b".git./hooks/pre-push": (EXEC, HOOK)}, {"bad-objects"}),
    ("dotgit-hfs", {".g\u200cit/hooks/pre-push".encode(): (EXEC, HOOK)}, {"bad-objects"}),
    ("dotgit-short", {b"git~1/hooks/pre-push": (EXEC, HOOK)}, {"bad-objects"}),
    (
        "commondir",
        {
            b".git/commondir": (BLOB, b"../evil\n"),
            b"evil/config": (BLOB, b'[remote "origin"]\n\tuploadpack = touch pwned\n'),
        },
        {"bad-objects"},
    ),
    (
        "forged-snapshot",
        {b".memhtml/headd/snapshots/" + b"a" * 40 + b".snap": (BLOB, b"HDSNAP forged")},
        {"refused-tree"},
    ),
    ("session-log", {b".memhtml/headd/sessions/s1.jsonl": (BLOB, b"{}\n")}, {"refused-tree"}),
    ("index-db", {b".memhtml/index.db": (BLOB, b"SQLite format 3\0")}, {"refused-tree"}),
    ("memhtml-file", {b".memhtml": (BLOB, b"not a directory")}, {"refused-tree"}),
    ("memhtml-link", {b".memhtml": (LINK, b"../../outside")}, {"refused-tree"}),
    ("long-name", {b"n" * 300 + b".html": (BLOB, b"x")}, {"refused-tree"}),
    ("not-utf8", {b"areas-\xff.html": (BLOB, b"x")}, {"refused-tree"}),
    ("dotdot", {b"../outside": (BLOB, b"x")}, {"bad-objects", "refused-tree"}),
    ("gitmodules-link", {b".gitmodules": (LINK, b"../../outside")}, {"bad-objects"}),
    (
        "gitmodules-option-url",
        {
            b".gitmodules": (
                BLOB,
                b'[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch pwned\n',
            )
        },
        {"bad-objects"},
    ),
    ("gitmodules-dir", {b".gitmodules/x": (BLOB, b"x")}, {"bad-objects", "refused-tree"}),
]


@pytest.mark.parametrize(("files", "kinds"), [a[1:] for a in ATTACKS], ids=[a[0] for a in ATTACKS])
def test_an_attack_commit_is_refused_whole_and_visible(
    hub: tuple[Path, Path], files: dict[bytes, tuple[str, bytes]], kinds: set[str]
) -> None:
    remote, b = hub
    before_tip = git(b, "rev-parse", "main")
    before_files = work_files(b) - {".git/index", ".git/FETCH_HEAD"}
    bad = attack_commit(remote, files)
    sync = sync_of(b)
    report = sync.round()
    assert report.action == "failed", report
    error = sync.status().last_error
    assert error is not None and error.kind in kinds, error
    if error.kind == "refused-tree":
        assert error.commit == bad and error.path, error
    assert git(b, "rev-parse", "main") == before_tip
    after = work_files(b)
    new = {p for p in after - before_files if not p.startswith(".git/objects/")}
    new -= {".git/index", ".git/FETCH_HEAD", ".git/refs/remotes/origin/main", ".git/logs"}
    assert all(p.startswith((".git/logs/", ".git/refs/remotes/")) for p in new), new
    assert not any(".memhtml" in p for p in after)
    fsck(b)
    # Local work keeps going, and stays local until the remote is fixed.
    local = external_commit(b, {"areas/inbox/kept.html": memory_html("Kept", "Kept locally.")})
    assert sync.round().action == "failed"
    assert git(b, "rev-parse", "main") == local


def test_a_refusal_persists_until_the_remote_changes_then_clears(hub: tuple[Path, Path]) -> None:
    remote, b = hub
    bad = attack_commit(remote, {b".memhtml/state.db": (BLOB, b"SQLite format 3\0")})
    sync = sync_of(b)
    for _ in range(2):
        assert sync.round().action == "failed"
        error = sync.status().last_error
        assert error is not None and error.kind == "refused-tree"
        assert error.commit == bad and error.path == ".memhtml/state.db"
        assert error.transient is False
    # The collaborator removes the file: the next round fast-forwards past the bad commit.
    good_tree = git(remote, "rev-parse", "main~1^{tree}")
    fixed = git(remote, "commit-tree", good_tree, "-p", bad, "-m", "fix")
    git(remote, "update-ref", "refs/heads/main", fixed)
    assert sync.round().action == "fast-forward"
    assert sync.status().last_error is None
    assert git(b, "rev-parse", "main") == fixed
    assert not (b / ".memhtml" / "state.db").exists()


def test_a_checkout_failure_is_a_failed_round_not_an_escape(hub: tuple[Path, Path]) -> None:
    """A failure after the fetch (here: the work tree refuses to be written) is reported as a
    ``checkout`` failure in ``last_error``, never raised out of the round."""
    remote, b = hub
    attack_commit(remote, {b"areas/locked/x.html": (BLOB, b"x")})
    (b / "areas" / "locked").write_text("an untracked file where the remote has a directory")
    sync = sync_of(b)
    report = sync.round()
    assert report.action == "failed"
    error = sync.status().last_error
    assert error is not None and error.kind == "checkout", error
    assert sync.round().action == "failed"  # and again, without an escape


def test_fetch_refuses_bad_objects_before_they_enter_the_store(hub: tuple[Path, Path]) -> None:
    remote, b = hub
    bad = attack_commit(remote, {b".git/hooks/pre-push": (EXEC, HOOK)})
    sync_of(b).round()
    with pytest.raises(KeyError):
        pygit2.Repository(str(b))[bad]


def test_the_judge_refuses_without_the_fetch_check(tmp_path: Path) -> None:
    """The tree check stands on its own: a repository that already holds a ``.git`` tree (an
    older headd, a fetch by hand) is still refused before its checkout."""
    make_store(tmp_path)
    hook = blob(tmp_path, HOOK)
    inner = mktree(tmp_path, [(EXEC, hook, b"pre-push")])
    hooks = mktree(tmp_path, [("040000", inner, b"hooks")])
    root = mktree(tmp_path, [("040000", hooks, b".Git"), (GITLINK, b"1" * 40, b"vendored")])
    commit = git(tmp_path, "commit-tree", root.decode(), "-m", "x")
    problem = TreeJudge().problem(pygit2.Repository(str(tmp_path)), commit)
    assert problem is not None and problem.path == ".Git"


@pytest.mark.slow
def test_a_following_daemon_shows_the_refusal_logs_it_once_and_restarts(
    hub: tuple[Path, Path],
) -> None:
    """Against a daemon following the hub every second: the refused commit shows in plain
    ``headctl status`` (kind, commit, path), the log names it once over many rounds, a local
    write still commits, and the daemon restarts."""
    remote, b = hub
    sock = short_socket_dir() / "b.sock"
    extra = ["--remote", "origin", "--fetch-interval", "0.3"]
    daemon = Daemon(b, sock, extra=extra).wait_ready()
    try:
        bad = attack_commit(
            remote, {b".memhtml/headd/snapshots/" + b"b" * 40 + b".snap": (BLOB, b"forged")}
        )

        def refused() -> bool:
            with Client(str(sock)).connect() as client:
                error = client.call("status", {})["remote"]["last_error"]
            return error is not None and error["kind"] == "refused-tree"

        assert wait_for(refused, timeout=20), daemon.log()
        shown = headctl("--socket", str(sock), "status")
        assert shown.returncode == 0, shown.stderr
        assert "remote error" in shown.stdout and "refused-tree" in shown.stdout
        assert bad[:12] in shown.stdout
        with Client(str(sock)).connect() as client:
            session = client.call("session.open", {})["session"]
            client.call(
                "session.apply",
                {
                    "session": session,
                    "ops": [{"op": "write", "title": "Kept", "type": "semantic", "claim": "Kept."}],
                },
            )
            result = client.call("session.commit", {"session": session, "message": "kept"})
        assert result["outcome"] == "committed"
        time.sleep(1.5)  # several more rounds, each refusing the same commit
    finally:
        assert daemon.stop() == 0
    log = daemon.log()
    assert log.count("refused (refused-tree)") == 1, log
    assert "Traceback" not in log
    assert not (b / ".memhtml" / "headd" / "snapshots" / ("b" * 40 + ".snap")).exists()
    assert git(b, "rev-parse", "main") == result["sha"]
    Daemon(b, sock, extra=extra).wait_ready().stop()


@pytest.mark.parametrize("target", ["main^{tree}", "main:.gitignore"])
def test_a_branch_that_names_no_commit_is_refused_and_status_still_answers(
    hub: tuple[Path, Path], target: str
) -> None:
    """A branch git's receive-pack would never write (a tree or a blob), written on the server
    by hand: the fetch refuses it before the tracking ref moves, and ``status`` answers."""
    remote, b = hub
    before = git(b, "rev-parse", "main")
    tracking = git(b, "rev-parse", "refs/remotes/origin/main")
    obj = git(remote, "rev-parse", target)
    git(remote, "pack-refs", "--all")
    (remote / "refs" / "heads" / "main").write_text(obj + "\n")
    sync = sync_of(b)
    assert sync.round().action == "failed"
    status = sync.status()
    error = status.last_error
    assert error is not None and error.kind == "refused-tree" and error.commit == obj, error
    assert "not a commit" in error.message
    assert git(b, "rev-parse", "main") == before
    assert git(b, "rev-parse", "refs/remotes/origin/main") == tracking
    fsck(b)


def test_a_tree_nested_beyond_the_depth_limit_is_refused(hub: tuple[Path, Path]) -> None:
    """Eleven hundred one-letter directories stay inside git's path limit but would overflow a
    recursive walk of the tree; the judge refuses them at ``MAX_DEPTH`` with the path so far."""
    remote, b = hub
    node = mktree(remote, [(BLOB, blob(remote, b"x"), b"deep.html")])
    for _ in range(1100):
        node = mktree(remote, [("040000", node, b"d")])
    parent = git(remote, "rev-parse", "main")
    listing = git(remote, "ls-tree", "main").splitlines()
    entries = [
        (m, s.encode(), n.encode())
        for m, _, s, n in (re.split(r"\s+", e, maxsplit=3) for e in listing)
    ]
    root = mktree(remote, [*entries, ("040000", node, b"areas-deep")])
    bad = git(remote, "commit-tree", root.decode(), "-p", parent, "-m", "deep")
    git(remote, "update-ref", "refs/heads/main", bad)
    sync = sync_of(b)
    assert sync.round().action == "failed"
    error = sync.status().last_error
    assert error is not None and error.kind == "refused-tree" and error.commit == bad, error
    assert error.path is not None and error.path.count("/") == MAX_DEPTH - 1
    assert git(b, "rev-parse", "main") == parent


def test_a_quarantine_a_killed_fetch_left_is_swept(hub: tuple[Path, Path]) -> None:
    """``kill -9`` during a fetch leaves its quarantine (a partial pack) in the object
    directory; the next round removes it once no round can still be using it."""
    remote, b = hub
    stale = b / ".git" / "objects" / (quarantine.PREFIX + "killed")
    (stale / "pack").mkdir(parents=True)
    (stale / "pack" / "tmp_pack_x").write_bytes(b"PACK" + b"\0" * 64)
    old = time.time() - quarantine.STALE_AFTER - 60
    os.utime(stale, (old, old))
    attack_commit(remote, {b"areas/inbox/fine.html": (BLOB, memory_html("Fine", "Fine.").encode())})
    assert sync_of(b).round().action == "fast-forward"
    assert not stale.exists()
    assert not list((b / ".git" / "objects").glob(quarantine.PREFIX + "*"))
    fsck(b)
