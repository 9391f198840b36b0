"""The session path leaves no repository for the cyclic collector.

A ``pygit2.Repository`` is a reference cycle (it holds helpers that point back at it), so one
opened per call and dropped is freed only by the cyclic collector; the daemon freezes the
collector's generations after each new version (``headd/daemon/follow.py``), which would keep
such garbage forever. The manager therefore opens one repository per thread and reuses it.

Mutation note: ``SessionManager._repo`` returning ``git_io.open_repo(self.store)`` on every call
makes this test red (several repositories a session in the collector's garbage).
"""

from __future__ import annotations

import gc
from pathlib import Path

import pygit2
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.ops import Put
from headd.store.manager import SessionManager


def _one_session(manager: SessionManager, n: int) -> None:
    s = manager.open().session
    html = memory_html(f"Fact {n}", f"Fact number {n} is recorded by a session.", **WRITTEN)
    assert manager.apply(s, [Put(path=f"areas/inbox/fact-{n}.html", html=html)]).violations == ()
    assert manager.commit(s).outcome == "committed"
    manager.close(s)


def test_sessions_leave_no_repository_to_the_cyclic_collector(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    manager = SessionManager(store, clock=TickingClock())
    _one_session(manager, 0)  # warm: the per-thread repository and the versions are opened
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for n in range(1, 6):
            _one_session(manager, n)
        gc.collect()
        repositories = [o for o in gc.garbage if isinstance(o, pygit2.Repository)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert repositories == []
