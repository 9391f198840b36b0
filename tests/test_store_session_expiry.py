"""Sessions nobody closes expire, and expiry never drops what an agent wrote.

A real git store and the session manager with an injected clock moved past the idle limit:
a committed session left open and an empty one expire; one with ops waiting for a commit stays,
and so does one used within the limit. The daemon sweeps on ``session.open`` and
``session.list``.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``SessionCalls``'s open without its ``expire_idle`` ->
  ``test_the_daemon_sweeps_idle_sessions_as_one_opens``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from support.stores import SEED_FILES, TickingClock, make_store

from headd.ops import Write
from headd.store.manager import SESSION_IDLE_S, SessionManager


def test_idle_sessions_expire_and_ones_holding_ops_stay(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    clock = TickingClock()
    manager = SessionManager(store, clock=clock)
    note = Write(type="semantic", title="Orders live in Postgres", claim="Orders live in Postgres.")
    committed = manager.open().session
    manager.apply(committed, [note])
    assert manager.commit(committed, "orders").outcome == "committed"
    empty = manager.open().session
    waiting = manager.open().session
    manager.apply(waiting, [Write(type="semantic", title="Pool", claim="The pool is forty.")])
    assert manager.expire_idle() == ()
    clock.now += timedelta(seconds=SESSION_IDLE_S)
    fresh = manager.open().session
    assert sorted(manager.expire_idle()) == sorted([committed, empty])
    assert {s.session for s in manager.list().sessions} == {waiting, fresh}
    assert [s.ops for s in manager.list().sessions if s.session == waiting] == [1]
    reopened = SessionManager(store, clock=clock)  # the log agrees after a restart
    assert {s.session for s in reopened.list().sessions} == {waiting, fresh}


def test_the_daemon_sweeps_idle_sessions_as_one_opens(tmp_path: Path) -> None:
    """``session.open`` through the daemon's session calls closes the idle empty sessions."""
    import asyncio

    import pygit2

    from headd.daemon.follow import GitThread, RefFollower, resolve_followed_ref
    from headd.daemon.session_calls import SessionCalls
    from headd.head.version import advance_head, load_head
    from headd.wire.methods import SessionOpen

    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    clock = TickingClock()
    manager = SessionManager(store, clock=clock)
    git = GitThread(store)
    ref = resolve_followed_ref(pygit2.Repository(str(store)), None)
    follower = RefFollower(store, ref, git, loader=load_head, advancer=advance_head)
    follower.load_blocking()
    calls = SessionCalls(manager, follower, None, clock)

    async def scenario() -> None:
        idle = (await calls.call(SessionOpen())).session
        clock.now += timedelta(seconds=SESSION_IDLE_S)
        fresh = (await calls.call(SessionOpen())).session
        # the manager's own list, which does not sweep (``session.list`` does)
        assert {s.session for s in manager.list().sessions} == {fresh} != {idle}

    try:
        asyncio.run(scenario())
    finally:
        calls.shutdown()
        git.shutdown()
