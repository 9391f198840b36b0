"""The store lock, and the recovery of git lock files a killed process left behind.

A process killed inside a git write (libgit2's or git's: ``index.lock`` while the index is
written, ``refs/heads/<branch>.lock`` while a ref moves) leaves the lock file, and git then
refuses every later write until somebody deletes it. Deleting a lock a live process holds would
let two writers interleave, so a lock is removed only by this rule (``stale``):

1. this process holds the store lock (``StoreLock``: an ``flock`` on ``.git/headd.lock``, which
   the kernel drops when its holder dies, however it dies), so no other headd works on the store;
2. no live process has the lock file open (``/proc/*/fd``), and no live ``git`` process works in
   the store (``/proc/*/cwd`` inside it: ``git commit`` keeps ``index.lock`` while its editor is
   open, with the file closed);
3. the lock is older than the store lock (it predates this process, so whoever made it is
   gone), or it has sat unchanged for ``GRACE_S`` (a live writer holds one for milliseconds).

Without ``/proc`` nothing can be known about holders, and nothing is removed. Every removal is
logged at WARNING with the path and its age.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

STORE_LOCK = "headd.lock"
#: How long a git lock may sit unchanged, with no live holder, before it counts as stale.
GRACE_S = 5.0


class StoreLock:
    """An exclusive ``flock`` on ``<git dir>/headd.lock``, held while this object lives.

    ``acquired`` is False when another process holds it (then this process must not recover
    anybody's locks); ``since`` is the wall-clock time it was taken.
    """

    def __init__(self, git_dir: str | os.PathLike[str]) -> None:
        self.path = Path(git_dir) / STORE_LOCK
        self.since = time.time()
        self._fd: int | None = None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            log.warning("cannot open the store lock %s: %s", self.path, exc.strerror)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return
        self._fd = fd

    @property
    def acquired(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.release()


def git_locks(git_dir: Path, ref: str) -> list[Path]:
    """The lock files a commit of ``ref`` can leave: the index's, the ref's, HEAD's, and the
    packed refs'."""
    return [
        git_dir / name for name in ("index.lock", f"{ref}.lock", "HEAD.lock", "packed-refs.lock")
    ]


def _processes() -> list[Path]:
    with os.scandir("/proc") as entries:
        return [Path(entry.path) for entry in entries if entry.name.isdigit()]


def _open_files(proc: Path) -> list[str]:
    with os.scandir(proc / "fd") as entries:
        return [os.readlink(entry.path) for entry in entries]


def _held(lock: Path, workdir: Path | None) -> bool:
    """Whether a live process may hold ``lock``: has it open, or is a git working in the store."""
    if not os.path.isdir("/proc/self/fd"):
        return True  # no way to know: assume held
    target = os.fspath(lock)
    inside = os.fspath(workdir.resolve()) if workdir is not None else None
    for proc in _processes():
        try:
            if inside is not None and (proc / "comm").read_text().strip() == "git":
                cwd = os.readlink(proc / "cwd")
                if cwd == inside or cwd.startswith(inside + os.sep):
                    return True
            if target in _open_files(proc):
                return True
        except OSError:
            continue  # gone, or not ours to look at
    return False


def recover(store_lock: StoreLock, git_dir: Path, workdir: Path | None, ref: str) -> list[Path]:
    """Remove every stale git lock of a commit of ``ref`` (the rule in the module docstring);
    answer the locks still there, held by somebody alive. Without the store lock, another
    headd writes here and its locks come and go: nothing is judged and nothing answered."""
    if not store_lock.acquired:
        return []
    left = [lock for lock in git_locks(git_dir, ref) if os.path.lexists(lock)]
    if not left:
        return []
    kept = []
    now = time.time()
    for lock in left:
        try:
            mtime = os.lstat(lock).st_mtime
        except FileNotFoundError:
            continue
        except OSError:
            kept.append(lock)
            continue
        if mtime >= store_lock.since and now - mtime < GRACE_S:
            kept.append(lock)  # fresh, and made since we started: somebody's write in progress
            continue
        if _held(lock, workdir):
            log.info("git lock %s is held by a live process; left alone", lock)
            kept.append(lock)
            continue
        try:
            lock.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("cannot remove stale git lock %s: %s", lock, exc.strerror)
            kept.append(lock)
            continue
        log.warning("removed stale git lock %s (%.0f s old, no live holder)", lock, now - mtime)
    return kept
