"""Helpers for the store tests (no tests here): real repositories built with pygit2.

Memory files are rendered by the project's own writer (``headd.memfile.render``), so every file a
test commits is one memhtml would have written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2

from headd.memfile.render import fields_from_write, render_memory

NOW = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)


class TickingClock:
    """An injected clock: each call one second later than the last."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def memory(
    title: str,
    claim: str,
    memory_type: str = "semantic",
    entities: tuple[str, ...] = ("system:headd",),
    body: tuple[str, ...] = (),
) -> str:
    fields = fields_from_write(
        title=title,
        memory_type=memory_type,
        now=NOW,
        claim=claim,
        body=list(body),
        entities=entities,
    )
    return render_memory(fields)


CAPITAL = memory("Capital of India", "The capital of India is New Delhi.")
ALPHA = memory("Alpha", "Alpha is the first letter of the Greek alphabet.")
SEED_FILES = {"areas/inbox/capital.html": CAPITAL, "areas/inbox/alpha.html": ALPHA}

SIGNATURE = pygit2.Signature("Test Author", "test@example.org", 1_764_000_000, 0)


def git(store: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(store), *args], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def make_store(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository on ``main`` with ``files`` committed and checked out."""
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.config["user.name"] = "Store Owner"
    repo.config["user.email"] = "owner@example.org"
    commit_files(root, files if files is not None else SEED_FILES, "seed")
    return root


def commit_files(
    root: Path, files: dict[str, str], message: str = "hand edit", remove: tuple[str, ...] = ()
) -> str:
    """Commit through the shared index and working tree, as a person would."""
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.read()
    for path, html in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(html, encoding="utf-8")
        index.add(path)
    for path in remove:
        (root / path).unlink()
        index.remove(path)
    index.write()
    tree = index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    sha = repo.create_commit("HEAD", SIGNATURE, SIGNATURE, message, tree, parents)
    return str(sha)


def tip(root: Path, ref: str = "refs/heads/main") -> str:
    return str(pygit2.Repository(str(root)).references[ref].target)


def file_at(root: Path, sha: str, path: str) -> str | None:
    repo = pygit2.Repository(str(root))
    tree = repo[sha].peel(pygit2.Tree)
    try:
        return bytes(repo[tree[path].id].read_raw()).decode("utf-8")
    except KeyError:
        return None


def tree_paths(root: Path, sha: str) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", sha).splitlines())


# --- git processes killed while they hold a lock ------------------------------------------------


def _wait_for_file(path: Path, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared (git exited {proc.returncode})")
        time.sleep(0.01)


def live_git_holding_index_lock(store: Path, path: str) -> subprocess.Popen[bytes]:
    """A real ``git commit -a`` waiting in its editor, holding ``.git/index.lock``; the
    tracked file ``path`` is modified for it and restored by ``kill_holder``."""
    full = store / path
    original = full.read_bytes()
    full.write_bytes(original + b"\n")
    env = {**os.environ, "GIT_EDITOR": "sleep 120 #"}
    proc = subprocess.Popen(
        ["git", "-C", str(store), "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-a"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    proc.restore = (full, original)  # type: ignore[attr-defined]
    _wait_for_file(store / ".git/index.lock", proc)
    return proc


def live_git_holding_ref_lock(store: Path, ref: str = "refs/heads/main") -> subprocess.Popen[bytes]:
    """A real ``git update-ref --stdin`` transaction prepared (``<ref>.lock`` taken), waiting."""
    old = tip(store, ref)
    proc = subprocess.Popen(
        ["git", "-C", str(store), "update-ref", "--stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(f"start\nupdate {ref} {old} {old}\nprepare\n".encode())
    proc.stdin.flush()
    _wait_for_file(store / ".git" / f"{ref}.lock", proc)
    return proc


def kill_holder(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the git process (and its editor) as a crash would: its lock file stays."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.stdin is not None:
        proc.stdin.close()
    restore = getattr(proc, "restore", None)
    if restore is not None:
        restore[0].write_bytes(restore[1])


def leave_stale_git_locks(store: Path, path: str = "areas/inbox/capital.html") -> list[Path]:
    """The locks a git killed mid-commit leaves: ``index.lock`` and ``refs/heads/main.lock``."""
    kill_holder(live_git_holding_index_lock(store, path))
    kill_holder(live_git_holding_ref_lock(store))
    locks = [store / ".git/index.lock", store / ".git/refs/heads/main.lock"]
    assert all(lock.exists() for lock in locks)
    return locks
