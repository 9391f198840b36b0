"""A commit killed with SIGKILL at every step leaves a consistent store the next call settles.

The commit runs in a child process with ``HEADD_TEST_CRASH_AT=<step>``, which makes it SIGKILL
itself right after that step. A fresh ``SessionManager`` (a daemon restart) then settles the log:
before the intent nothing happened; from the intent until the swap the commit did not land (the
checkout, if it had followed, is moved back); from the swap on it landed. Either way git and the
checkout agree, and the next ``commit`` of the session says which.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``recovery.settle``: skip the worktree rollback -> step ``worktree``.
- ``recovery.has_landed``: always False -> step ``swapped``.
- ``commit_session``: move the checkout before logging the intent -> step ``intent``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.git import git, tip, tree_paths
from support.memory import memory_html
from support.stores import NOW, SEED_FILES, WRITTEN, TickingClock, make_store

from headd.ops import Archive, Put
from headd.store.crashpoints import CRASH_ENV, STEPS
from headd.store.manager import SessionManager

CHILD = """
import sys
from datetime import datetime, timezone
from headd.store.manager import SessionManager
store, session = sys.argv[1], sys.argv[2]
clock = lambda: datetime(2026, 11, 30, 10, 0, 0, tzinfo=timezone.utc)
result = SessionManager(store, clock=clock).commit(session, "crash me")
print(result.outcome)
"""

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
LANDS = {"validated": False, "objects": False, "intent": False, "worktree": False}


def run_child(store: Path, session: str, step: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, CRASH_ENV: step}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(store), session],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("step", STEPS)
def test_a_commit_killed_at_each_step_is_settled(tmp_path: Path, step: str) -> None:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    base = tip(store)
    manager = SessionManager(store, clock=TickingClock())
    session = manager.open(id="crashy").session
    applied = manager.apply(
        session,
        [
            Put(path="areas/inbox/beta.html", html=BETA),
            Archive(path="areas/inbox/alpha.html"),
        ],
    )
    assert applied.violations == ()
    del manager

    child = run_child(store, session, step)
    assert child.returncode == -signal.SIGKILL, child.stderr

    landed = LANDS.get(step, True)
    after_crash = tip(store)
    assert after_crash != base if landed else after_crash == base
    assert "missing" not in git(store, "fsck", "--no-dangling")

    restarted = SessionManager(store, clock=TickingClock(NOW.replace(hour=11)))
    interrupted = step in ("intent", "worktree", "swapped")
    assert len(restarted.recovered) == (1 if interrupted else 0)
    if interrupted:
        settlement = restarted.recovered[0]
        assert settlement.session == session and settlement.landed is landed
    # Git and the checkout agree, whatever step the commit died at.
    assert git(store, "status", "--porcelain") == ""
    info = restarted.info(session)
    assert info.pending is None
    if landed:
        assert info.base == after_crash and info.ops == 0
        assert {"areas/inbox/beta.html", "archive/2026/areas/inbox/alpha.html"} <= tree_paths(
            store, after_crash
        )
        assert (store / "areas/inbox/beta.html").read_text() == BETA
    else:
        assert info.base == base and info.ops == 2
        assert not (store / "areas/inbox/beta.html").exists()
        assert (store / "areas/inbox/alpha.html").exists()

    # The next call says which, and the session goes on from there.
    result = restarted.commit(session)
    assert result.outcome == "committed"
    if interrupted:
        assert result.recovered is not None and result.recovered.landed is landed
    else:
        assert result.recovered is None
    if landed:
        assert result.sha == after_crash and result.paths == ()
    else:
        assert result.sha != base and git(store, "rev-parse", f"{result.sha}^") == base
    assert tip(store) == result.sha
    assert git(store, "status", "--porcelain") == ""
    assert git(store, "rev-list", "--count", f"{base}..{tip(store)}") == "1"
