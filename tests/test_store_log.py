"""Session logs: durable JSON lines, torn tails, and the fold that replays them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.errors import InvalidOp
from headd.ops import Archive, LinkOp, Put
from headd.store.session_log import SessionLog
from headd.store.sessions import (
    Applied,
    Closed,
    CorruptLog,
    Dropped,
    Intent,
    LoggedOp,
    Opened,
    Rebased,
    Settled,
    check_session_id,
    fold,
    step,
)

OPEN = Opened(session="s1", base="a" * 40, ref="refs/heads/main", at="2026-11-30T09:00:00Z")
PUT = LoggedOp(op=Put(path="areas/x.html", html="<p>x</p>"), from_write=True)
LINK = LoggedOp(op=LinkOp(path="areas/x.html", rel="relates_to", href="/areas/y.html"))
ARCHIVE = LoggedOp(op=Archive(path="areas/y.html", to="archive/2026/areas/y.html", html="h"))
INTENT = Intent(
    commit="c" * 40,
    parent="a" * 40,
    ref="refs/heads/main",
    paths=("areas/x.html",),
    worktree=True,
    at="2026-11-30T09:00:03Z",
)


def test_round_trip_every_event_kind(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    events = [
        OPEN,
        Applied(ops=(PUT, LINK, ARCHIVE), at="2026-11-30T09:00:01Z"),
        Dropped(indexes=(1,), at="2026-11-30T09:00:02Z"),
        Rebased(onto="b" * 40, at="2026-11-30T09:00:02Z"),
        INTENT,
        Settled(commit="c" * 40, landed=True, recovered=True, at="2026-11-30T09:00:04Z"),
        Closed(at="2026-11-30T09:00:05Z"),
    ]
    log.append("s1", *events[:3])
    for event in events[3:]:
        log.append("s1", event)
    assert log.read("s1") == events
    assert log.ids() == ["s1"]
    assert (tmp_path / ".memhtml/headd/sessions/s1.jsonl").read_text().count("\n") == len(events)
    log.remove("s1")
    assert log.ids() == []


def test_a_torn_last_line_is_dropped_and_cut_away(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    log.append("s1", OPEN, Applied(ops=(PUT,), at="t"))
    path = log.path_of("s1")
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"ev":"apply","ops":[{"op":{"op":"put","pa')
    assert log.read("s1") == [OPEN, Applied(ops=(PUT,), at="t")]
    assert path.read_bytes() == whole
    log.append("s1", Closed(at="u"))
    assert log.read("s1")[-1] == Closed(at="u")


def test_a_line_that_is_whole_but_garbled_ends_the_log_there(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    log.append("s1", OPEN)
    path = log.path_of("s1")
    path.write_bytes(path.read_bytes() + b"not json\n")
    assert log.read("s1") == [OPEN]


@pytest.mark.parametrize("bad", ["", "../up", "a/b", ".hidden", "x" * 129, "sp ace"])
def test_session_ids_are_one_safe_segment(bad: str) -> None:
    with pytest.raises(InvalidOp):
        check_session_id(bad)


def test_fold_settles_intents_both_ways() -> None:
    state = fold([OPEN, Applied(ops=(PUT, LINK), at="t1"), INTENT])
    assert state.pending == INTENT and len(state.ops) == 2
    lost = step(state, Settled(commit=INTENT.commit, landed=False, recovered=True, at="t2"))
    assert lost.pending is None and len(lost.ops) == 2 and lost.base == OPEN.base
    landed = step(state, Settled(commit=INTENT.commit, landed=True, recovered=True, at="t2"))
    assert landed.pending is None and landed.ops == () and landed.base == INTENT.commit
    assert landed.last_settled is not None and landed.last_settled.recovered


def test_fold_refuses_logs_that_cannot_be() -> None:
    with pytest.raises(CorruptLog):
        fold([])
    with pytest.raises(CorruptLog):
        fold([Applied(ops=(PUT,), at="t")])
    with pytest.raises(CorruptLog):
        fold([OPEN, OPEN])
    with pytest.raises(CorruptLog):
        fold([OPEN, Closed(at="t"), Applied(ops=(PUT,), at="t")])


ops_strategy = st.lists(st.sampled_from([PUT, LINK, ARCHIVE]), min_size=1, max_size=4)
event_strategy = st.one_of(
    ops_strategy.map(lambda ops: Applied(ops=tuple(ops), at="t")),
    st.lists(st.integers(0, 8), max_size=3).map(lambda ix: Dropped(indexes=tuple(ix), at="t")),
    st.sampled_from("bcdef").map(lambda c: Rebased(onto=c * 40, at="t")),
    st.just(INTENT),
    st.booleans().map(lambda ok: Settled(commit="c" * 40, landed=ok, recovered=False, at="t")),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(event_strategy, max_size=12))
def test_replaying_the_log_gives_the_state_that_was_answered(tmp_path_factory, events) -> None:
    """Property: what a restart folds from disk equals what the live process held."""
    store = tmp_path_factory.mktemp("log")
    log = SessionLog(store)
    log.append("s1", OPEN)
    live = step(None, OPEN)
    expected_ops = []
    for event in events:
        log.append("s1", event)
        live = step(live, event)
        if isinstance(event, Applied):
            expected_ops.extend(event.ops)
        elif isinstance(event, Dropped):
            expected_ops = [op for i, op in enumerate(expected_ops) if i not in event.indexes]
        elif isinstance(event, Settled) and event.landed:
            expected_ops = []
    assert fold(log.read("s1")) == live
    assert list(live.ops) == expected_ops
