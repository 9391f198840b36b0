"""Sessions nobody closes expire, and expiry never drops what an agent wrote.

A real git store and the session manager with an injected clock moved past the idle limit:
a committed session left open and an empty one expire; one with ops waiting for a commit stays,
and so does one used within the limit. The daemon sweeps on ``session.open`` and
``session.list``.

A sweep remembers the earliest moment a session can next expire and returns at once before it;
a Hypothesis run of opens, applies, commits, closes and clock moves checks that every sweep still
closes exactly the sessions a full scan names.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``SessionCalls``'s open without its ``expire_idle`` ->
  ``test_the_daemon_sweeps_idle_sessions_as_one_opens``.
- the sweep's bound without ``now`` (sessions opened after a sweep not counted) ->
  ``test_a_remembered_bound_never_hides_an_idle_session``.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.stores import NOW, SEED_FILES, TickingClock, make_store

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


class HeldClock:
    """An injected clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("open"), st.integers(0, 0)),
        st.tuples(st.just("apply"), st.integers(0, 9)),
        st.tuples(st.just("commit"), st.integers(0, 9)),
        st.tuples(st.just("close"), st.integers(0, 9)),
        st.tuples(st.just("wait"), st.sampled_from([1, 60, 3600, int(SESSION_IDLE_S) - 1])),
        st.tuples(st.just("sweep"), st.integers(0, 0)),
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_a_remembered_bound_never_hides_an_idle_session(steps: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        make_store(store, SEED_FILES, ignore=None)
        clock = HeldClock()
        manager = SessionManager(store, clock=clock)
        opened: list[str] = []
        for number, (step, k) in enumerate(steps):
            live = [s.session for s in manager.list().sessions]
            target = live[k % len(live)] if live else None
            if step == "open":
                opened.append(manager.open().session)
            elif step == "apply" and target is not None:
                claim = f"Fact {number} holds."
                manager.apply(target, [Write(type="semantic", title=claim, claim=claim)])
            elif step == "commit" and target is not None:
                manager.commit(target, f"step {number}")
            elif step == "close" and target is not None:
                manager.close(target)
            elif step == "wait":
                clock.now += timedelta(seconds=k)
            cutoff = clock.now.timestamp() - SESSION_IDLE_S
            due = sorted(
                s.session
                for s in manager.list().sessions
                if s.ops == 0
                and not s.pending
                and datetime.fromisoformat(s.updated_at).timestamp() < cutoff
            )
            assert sorted(manager.expire_idle()) == due
