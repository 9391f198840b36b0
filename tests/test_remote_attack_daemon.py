"""A real daemon follows a real bare remote while a collaborator pushes attacks at it.

The attacker is a clone of the hub that builds each commit with ``git mktree``/``commit-tree``
(``support.attack``) and sends it with a plain ``git push``, as anyone with push access can; the
hub accepts whatever is pushed (no receive-side checks). The follower is the real ``headd``
process with ``--remote origin --fetch-interval 0.3``, asked through its socket, plain
``headctl status`` and the MCP bridge's ``memory_status``. For every attack:

- nothing runs: no ``pwned`` file appears anywhere, and nothing lands in ``.git`` (no hook, no
  ``commondir``, no config) or in headd's private state;
- the refusal is visible (its kind, and for a refused tree the commit and path) while the
  daemon keeps serving searches and committing local writes;
- once the remote is fixed the follower follows again and the local writes reach the remote;
- ``git fsck --strict`` stays clean, the daemon stops on SIGTERM and starts again.

Forging a memory by the daemon's own snapshot format is tried twice: pushed (refused as a tree)
and planted straight into the snapshot directory before a restart after ``kill -9`` (refused by
its keyed digest: the restarted daemon serves the tip from git, not the forgery). Guards seen
failing when broken: the tree check dropped from the round -> the ``.memhtml/headd`` attacks
plant their files and the follower takes the commit; the digest check dropped from
``SnapshotStore`` -> the restarted daemon serves the forged memory.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pygit2
import pytest
from headd_client import Client
from support.attack import BLOB, EXEC, LINK, attack_commit
from support.daemon import Daemon, headctl, short_socket_dir, wait_for
from support.git import git
from support.mcp import bridge, structured
from support.memory import memory_html
from support.remote import fsck
from support.stores import make_store

from headd.daemon.snapshot_store import SnapshotStore
from headd.head import snapshot as snap
from headd.head.version import load_head

pytestmark = pytest.mark.slow

#: Where every payload would leave its mark: replaced by an absolute path in the test's root.
MARK = b"@MARK@"
HOOK = b"#!/bin/sh\ntouch @MARK@\n"
EXTRA = ["--remote", "origin", "--fetch-interval", "0.3"]


class Follower:
    """The hub, the attacker's clone, and the follower's store with its daemon."""

    def __init__(self, root: Path) -> None:
        seed = root / "seed"
        make_store(seed)
        self.root = root
        self.hub = root / "hub.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(self.hub)], check=True)
        self.store = root / "b"
        self.attacker = root / "attacker"
        for clone in (self.store, self.attacker):
            subprocess.run(["git", "clone", "-q", str(self.hub), str(clone)], check=True)
        git(self.store, "config", "user.name", "B")
        git(self.store, "config", "user.email", "b@example.org")
        self.sock = short_socket_dir() / "b.sock"
        #: The file any payload that ran would create.
        self.mark = root / "pwned"
        self.daemon = Daemon(self.store, self.sock, extra=EXTRA).wait_ready()

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        with Client(str(self.sock)).connect() as client:
            return client.call(method, params or {})

    def last_error(self) -> dict[str, Any] | None:
        error = self.call("status")["remote"]["last_error"]
        return dict(error) if error else None

    def write(self, title: str, claim: str) -> str:
        with Client(str(self.sock)).connect() as client:
            session = client.call("session.open", {})["session"]
            op = {"op": "write", "title": title, "type": "semantic", "claim": claim}
            client.call("session.apply", {"session": session, "ops": [op]})
            result = client.call("session.commit", {"session": session, "message": title})
        assert result["outcome"] == "committed", result
        return str(result["sha"])

    def push(self, files: dict[bytes, tuple[str, bytes]]) -> str:
        """The attacker's commit on the hub's tip, sent with a plain ``git push``."""
        git(self.attacker, "fetch", "-q", "origin")
        git(self.attacker, "reset", "-q", "--hard", "origin/main")
        mark = str(self.mark).encode()
        armed = {path: (mode, data.replace(MARK, mark)) for path, (mode, data) in files.items()}
        bad = attack_commit(self.attacker, armed)
        git(self.attacker, "push", "-q", "origin", f"{bad}:refs/heads/main")
        return bad

    def force(self, sha: str) -> None:
        """The remote fixed by rewriting its branch (the attacker's objects stay on the hub)."""
        git(self.attacker, "push", "-q", "--force", "origin", f"{sha}:refs/heads/main")

    def fix_on_top(self, bad: str) -> str:
        """The remote fixed by a commit on the bad one that takes the bad paths out again."""
        good_tree = git(self.attacker, "rev-parse", f"{bad}~1^{{tree}}")
        fixed = git(self.attacker, "commit-tree", good_tree, "-p", bad, "-m", "fix")
        git(self.attacker, "push", "-q", "origin", f"{fixed}:refs/heads/main")
        return fixed

    def found(self, query: str) -> list[str]:
        return [hit["path"] for hit in self.call("search", {"query": query})["hits"]]


@pytest.fixture
def follower(tmp_path: Path) -> Iterator[Follower]:
    side = Follower(tmp_path)
    try:
        yield side
    finally:
        side.daemon.stop()


def git_dir_files(store: Path) -> set[str]:
    """Files under ``.git`` besides objects, refs and logs (which fetches and commits write) and
    the few files git and headd write at the top; a planted hook or config shows up here."""
    top = store / ".git"
    names = {"index", "FETCH_HEAD", "ORIG_HEAD", "COMMIT_EDITMSG", "packed-refs", "index.lock"}
    names.add("snapshot.key")  # the daemon's own, written when it first stores a snapshot
    found = set()
    for entry in top.iterdir():
        if entry.name in ("objects", "refs", "logs"):
            continue  # written under way by the daemon's rounds; walking them would race
        for path in [entry, *entry.rglob("*")] if entry.is_dir() else [entry]:
            if path.is_file() and path.name not in names:
                found.add(str(path.relative_to(top)))
    return found


def processes_in(root: Path) -> list[str]:
    """Command lines of the live processes that work in ``root`` or name it (git, sh, ssh a
    round started), other than this test's own."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (str(root) in cmdline or cwd.startswith(str(root))):
            found.append(cmdline)
    return found


#: (id, files, the kinds that may refuse it, fixed by a commit on top (else by a force-push)).
ATTACKS: list[tuple[str, dict[bytes, tuple[str, bytes]], set[str], bool]] = [
    ("hook", {b".git/hooks/post-checkout": (EXEC, HOOK)}, {"bad-objects"}, False),
    ("hook-upper", {b".GIT/hooks/pre-push": (EXEC, HOOK)}, {"bad-objects"}, False),
    ("hook-ntfs", {b".git /hooks/pre-push": (EXEC, HOOK)}, {"bad-objects", "refused-tree"}, False),
    (
        "hook-hfs",
        {".gi\u200dt/hooks/pre-push".encode(): (EXEC, HOOK)},
        {"bad-objects", "refused-tree"},
        False,
    ),
    (
        "commondir",
        {
            b".git/commondir": (BLOB, b"../evil\n"),
            b"evil/config": (BLOB, b'[remote "origin"]\n\tuploadpack = touch @MARK@\n'),
        },
        {"bad-objects"},
        False,
    ),
    (
        "config",
        {b".git/config": (BLOB, b"[core]\n\tfsmonitor = touch @MARK@\n")},
        {"bad-objects"},
        False,
    ),
    (
        "snapshot",
        {b".memhtml/headd/snapshots/" + b"c" * 40 + b".snap": (BLOB, b"HDSNAP forged")},
        {"refused-tree"},
        True,
    ),
    (
        "state-db",
        {b".memhtml/headd/state.db": (BLOB, b"SQLite format 3\0")},
        {"refused-tree"},
        True,
    ),
    ("memhtml-link", {b".memhtml": (LINK, b"../outside")}, {"refused-tree"}, True),
    ("long-name", {b"areas/" + b"n" * 300 + b".html": (BLOB, b"x")}, {"refused-tree"}, True),
]


def test_pushed_attacks_are_refused_visibly_and_the_follower_keeps_following(
    follower: Follower,
) -> None:
    side = follower
    config = (side.store / ".git" / "config").read_bytes()
    inside_git = git_dir_files(side.store)
    kept: list[str] = []
    for number, (name, files, kinds, on_top) in enumerate(ATTACKS):
        bad = side.push(files)
        assert wait_for(lambda: side.last_error() is not None, timeout=20), (
            name,
            side.daemon.log(),
        )
        error = side.last_error()
        assert error is not None and error["kind"] in kinds, (name, error)
        if error["kind"] == "refused-tree":
            assert error["commit"] == bad and error["path"], (name, error)
        # Visible to a person and to an agent, while the daemon keeps serving and committing.
        shown = headctl("--socket", str(side.sock), "status")
        assert shown.returncode == 0 and error["kind"] in shown.stdout, (name, shown.stdout)
        title = f"Kept during attack {number}"
        local = side.write(title, f"Local fact number {number} kept while the remote is bad.")
        kept.append(title)
        assert git(side.store, "rev-parse", "main") == local
        assert side.found(f"local fact number {number}"), name
        # Nothing ran, nothing landed in .git or in headd's private state.
        assert not side.mark.exists(), name
        assert git_dir_files(side.store) == inside_git, name
        assert (side.store / ".git" / "config").read_bytes() == config, name
        assert not (side.store / ".memhtml" / "headd" / "snapshots" / ("c" * 40 + ".snap")).exists()
        assert (side.store / ".memhtml").is_dir() and not (side.store / ".memhtml").is_symlink()
        assert not (side.root / "outside").exists(), name  # where the link would have led
        fsck(side.store)
        # The remote is fixed: the follower follows again and pushes what it kept.
        if on_top:
            side.fix_on_top(bad)
        else:
            side.force(git(side.attacker, "rev-parse", f"{bad}~1"))

        def caught_up() -> bool:
            return side.last_error() is None and git(side.hub, "rev-parse", "main") == git(
                side.store, "rev-parse", "main"
            )

        assert wait_for(caught_up, timeout=20), (name, side.last_error(), side.daemon.log())
        kept_path = side.call("search", {"query": title})["hits"][0]["path"]
        assert kept_path in git(side.hub, "ls-tree", "-r", "--name-only", "main"), name
    assert not side.mark.exists()
    fsck(side.store)
    assert processes_in(side.root), "the probe sees the daemon itself while it runs"
    assert side.daemon.stop() == 0, side.daemon.log()
    assert "Traceback" not in side.daemon.log()
    assert wait_for(lambda: not processes_in(side.root), timeout=5), processes_in(side.root)
    side.daemon = Daemon(side.store, side.sock, extra=EXTRA).wait_ready()
    for title in kept:
        assert side.found(title.lower()), title


def test_memory_status_shows_the_refusal_to_an_agent(follower: Follower) -> None:
    side = follower
    bad = side.push({b".memhtml/index.db": (BLOB, b"SQLite format 3\0")})
    assert wait_for(lambda: side.last_error() is not None, timeout=20), side.daemon.log()

    async def status() -> dict[str, Any]:
        async with bridge(side.store, side.sock) as client:
            return structured(await client.call_tool("memory_status", {}))

    shown = anyio.run(status)
    assert shown["remote_error"]["kind"] == "refused-tree", shown
    assert shown["remote_error"]["commit"] == bad
    assert shown["remote_error"]["path"] == ".memhtml/index.db"
    assert shown["head_sha"] != bad


def test_a_planted_snapshot_is_not_served_after_a_crash(follower: Follower) -> None:
    """The daemon's own format, naming the tip, holding one memory in no commit, planted where
    the daemon keeps its snapshots (as a checkout of a pushed file would have written it) while
    the daemon is down after ``kill -9``: the restarted daemon loads the tip from git."""
    side = follower
    side.write("Real fact", "The real fact is in a commit.")
    tip = git(side.store, "rev-parse", "main")
    os.kill(side.daemon.proc.pid, signal.SIGKILL)
    side.daemon.stop()  # reaps it and closes its log
    forged_path = "areas/inbox/forged-fact.html"
    scratch = side.root / "scratch"
    subprocess.run(["git", "clone", "-q", str(side.store), str(scratch)], check=True)
    (scratch / forged_path).write_text(
        memory_html("Forged fact", "A quokka forgery in no commit."), encoding="utf-8"
    )
    git(scratch, "add", forged_path)
    git(scratch, "commit", "-q", "-m", "side")
    version = load_head(pygit2.Repository(str(scratch)), git(scratch, "rev-parse", "HEAD"))
    object.__setattr__(version, "_sha", tip)
    snapshots = SnapshotStore(side.store)
    snapshots.directory.mkdir(parents=True, exist_ok=True)
    for old in snapshots.directory.glob("*"):
        old.unlink()
    snapshots.path_of(tip).write_bytes(snap.encode_version(version))
    side.daemon = Daemon(side.store, side.sock, extra=EXTRA).wait_ready()
    assert side.call("status")["sha"] == tip
    assert side.found("quokka forgery") == []
    assert side.found("real fact")


def test_a_pushed_sidecar_row_beyond_64_bits_is_refused_by_its_row(follower: Follower) -> None:
    """The committed sidecar is data the remote may carry; a row ``state.access`` cannot hold
    arrives with a pull and ``state.import`` refuses that row by line and path, keeping the
    rest, instead of failing the whole import with an internal error."""
    side = follower
    row = (
        '{{"path":"{path}","accessCount":{count},"reinforcementCount":0,"outcomeScore":0,'
        '"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-09-01T00:00:00Z"}}\n'
    )
    sidecar = row.format(path="areas/ok.html", count=3) + row.format(
        path="areas/huge.html", count="123456789012345678901234567890"
    )
    pushed = side.push({b".memhtml/state/access.jsonl": (BLOB, sidecar.encode())})
    assert wait_for(lambda: git(side.store, "rev-parse", "main") == pushed, timeout=20)
    assert side.last_error() is None
    imported = side.call("state.import")
    assert (imported["rows"], imported["restored"], imported["skipped"]) == (1, 1, 1), imported
    assert imported["refused"] == [
        {
            "line": 2,
            "path": "areas/huge.html",
            "reason": "accessCount is out of range (above 9223372036854775807)",
        }
    ]


def test_a_follower_killed_while_its_remote_is_bad_restarts_and_refuses_again(
    follower: Follower,
) -> None:
    side = follower
    bad = side.push({b".git/hooks/post-merge": (EXEC, HOOK)})
    assert wait_for(lambda: side.last_error() is not None, timeout=20), side.daemon.log()
    tip = git(side.store, "rev-parse", "main")
    os.kill(side.daemon.proc.pid, signal.SIGKILL)
    side.daemon.stop()  # reaps it and closes its log
    side.daemon = Daemon(side.store, side.sock, extra=EXTRA).wait_ready()
    assert wait_for(lambda: side.last_error() is not None, timeout=20), side.daemon.log()
    error = side.last_error()
    assert error is not None and error["kind"] == "bad-objects", error
    assert side.call("status")["sha"] == tip != bad
    assert not side.mark.exists()
    fsck(side.store)
