"""Crashes as they happen: a commit SIGKILLed at one of its steps, and a real git SIGKILLed while
it holds a lock, leaving the lock file behind.

``run_child`` commits a session in a child process with ``HEADD_TEST_CRASH_AT=<step>``, which
makes the commit SIGKILL itself right after that step. The git holders are real ``git``
processes: ``git commit -a`` waiting in its editor holds ``.git/index.lock``; a prepared
``git update-ref --stdin`` transaction holds the ref's lock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from headd.store.crashpoints import CRASH_ENV
from support.git import tip

#: The child's commit: a fixed clock, the session's ops committed as "crash me".
CHILD = """
import sys
from datetime import datetime, timezone
from headd.store.manager import SessionManager
store, session = sys.argv[1], sys.argv[2]
clock = lambda: datetime(2026, 11, 30, 10, 0, 0, tzinfo=timezone.utc)
result = SessionManager(store, clock=clock).commit(session, "crash me")
print(result.outcome)
"""


def run_child(store: Path, session: str, step: str) -> subprocess.CompletedProcess[str]:
    """Commit ``session`` in a child process that SIGKILLs itself right after ``step``."""
    env = {**os.environ, CRASH_ENV: step}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(store), session],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


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
