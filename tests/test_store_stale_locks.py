"""Git lock files left by a kill -9 never leave the store stuck; a live holder's are kept.

The locks are real: a ``git commit -a`` waiting in its editor holds ``.git/index.lock``, a
prepared ``git update-ref --stdin`` transaction holds ``refs/heads/main.lock``, and each is
SIGKILLed, leaving its lock as a crash does. The commits are killed at every step of the commit
path (``crashpoints.STEPS``) in a child process (``support.crashes.run_child``).

Mutation notes (each applied once, the named tests seen red, then reverted):
- ``locks.recover`` returning ``[]`` -> every test here.
- ``locks._held`` answering False -> ``test_a_live_gits_locks_are_left_alone``.
- ``git_io.remove_temporaries`` call in ``recovery.settle`` removed -> step ``tempfile``.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from support.crashes import (
    kill_holder,
    leave_stale_git_locks,
    live_git_holding_index_lock,
    live_git_holding_ref_lock,
    run_child,
)
from support.git import git, tip
from support.memory import memory_html
from support.stores import NOW, SEED_FILES, WRITTEN, TickingClock, make_store

from headd.errors import GitFailure
from headd.ops import Put
from headd.store import locks
from headd.store.crashpoints import STEPS
from headd.store.manager import SessionManager

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
GAMMA = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)


def seeded(root: Path) -> Path:
    """The store tests' seed committed at ``root``."""
    make_store(root, SEED_FILES, ignore=None)
    return root


def session_with(manager: SessionManager, session: str, *ops: Put) -> str:
    s = manager.open(id=session).session
    assert manager.apply(s, list(ops)).violations == ()
    return s


@pytest.mark.parametrize("step", STEPS)
def test_a_commit_killed_at_each_step_with_stale_git_locks_recovers_at_start(
    tmp_path: Path, step: str
) -> None:
    store = seeded(tmp_path / "store")
    manager = SessionManager(store, clock=TickingClock())
    session = session_with(manager, "crashy", Put(path="areas/inbox/beta.html", html=BETA))
    del manager
    child = run_child(store, session, step)
    assert child.returncode == -signal.SIGKILL, child.stderr
    stale = leave_stale_git_locks(store)
    if step == "tempfile":
        assert (store / "areas/inbox/beta.html.headd-tmp").exists(), "killed mid-write"

    restarted = SessionManager(store, clock=TickingClock(NOW.replace(hour=11)))
    assert not any(lock.exists() for lock in stale)
    assert restarted.info(session).pending is None
    assert git(store, "status", "--porcelain") == "", "the checkout agrees with the branch"
    result = restarted.commit(session)
    assert result.outcome == "committed"
    assert git(store, "show", f"{tip(store)}:areas/inbox/beta.html") + "\n" == BETA
    other = session_with(restarted, "after", Put(path="areas/inbox/gamma.html", html=GAMMA))
    assert restarted.commit(other).outcome == "committed"
    assert git(store, "status", "--porcelain") == ""


def test_stale_git_locks_made_while_the_daemon_runs_are_recovered_before_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = seeded(tmp_path / "store")
    manager = SessionManager(store, clock=TickingClock())
    s = session_with(manager, "s", Put(path="areas/inbox/beta.html", html=BETA))
    stale = leave_stale_git_locks(store)  # made after the store lock: only the grace decides
    monkeypatch.setattr(locks, "GRACE_S", 0.0)
    assert manager.commit(s).outcome == "committed"
    assert not any(lock.exists() for lock in stale)
    assert git(store, "status", "--porcelain") == ""


def test_a_live_gits_locks_are_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A git alive in its editor holds ``index.lock``; a prepared ref transaction holds the
    ref's lock. Neither is removed: the commit answers ERR_GIT naming the lock before writing
    anything (never an internal error); once the holder dies, the next commit recovers and
    lands."""
    store = seeded(tmp_path / "store")
    monkeypatch.setattr(locks, "GRACE_S", 0.0)
    manager = SessionManager(store, clock=TickingClock())
    s = session_with(manager, "s", Put(path="areas/inbox/beta.html", html=BETA))
    transaction = live_git_holding_ref_lock(store)
    try:
        with pytest.raises(GitFailure, match="main.lock is held"):
            manager.commit(s)
        assert (store / ".git/refs/heads/main.lock").exists()
    finally:
        kill_holder(transaction)
    editor = live_git_holding_index_lock(store, "areas/inbox/capital.html")
    try:
        with pytest.raises(GitFailure, match="index.lock is held"):
            manager.commit(s)
        assert (store / ".git/index.lock").exists()
    finally:
        kill_holder(editor)
    assert not (store / "areas/inbox/beta.html").exists(), "the failed commits moved nothing"
    assert manager.info(s).pending is None and manager.info(s).last_settlement is None
    assert manager.commit(s).outcome == "committed"
    assert git(store, "status", "--porcelain") == ""


def test_a_second_holder_of_the_store_lock_recovers_nothing(tmp_path: Path) -> None:
    """Another headd holds the store: its locks are its own business, never removed here."""
    store = seeded(tmp_path / "store")
    first = SessionManager(store, clock=TickingClock())
    stale = leave_stale_git_locks(store)
    second = SessionManager(store, clock=TickingClock())
    assert all(lock.exists() for lock in stale)
    del second
    for lock in stale:
        lock.unlink()
    del first
