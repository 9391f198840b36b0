"""SessionManager: open / apply / view / rebase / close / list on real repositories.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``judge``: drop the ``existing is not None`` branch -> duplicate and claim-edit tests.
- ``apply``: append ``good`` even with violations -> ``test_apply_is_all_or_nothing``.
- ``resolve_ops``: forget ``batch_paths`` -> ``test_two_writes_with_one_title_get_two_paths``.
- ``SessionManager._load``: skip folding -> ``test_sessions_survive_a_restart``.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.git import tip
from support.memory import memory_html
from support.stores import ALPHA, SEED_FILES, WRITTEN, Store, TickingClock, make_store

from headd.errors import GitFailure, SessionLocked, SessionNotFound, WriteConflict
from headd.ops import Archive, Label, LinkOp, Move, Put, UnlinkOp, Write
from headd.store.manager import SessionManager
from headd.store.results import Violation

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


@pytest.fixture
def manager(store: Path) -> SessionManager:
    return SessionManager(store, clock=TickingClock())


def kinds(violations: tuple[Violation, ...]) -> list[tuple[str, str | None, int | None]]:
    return [(v.kind, v.path, v.op) for v in violations]


def test_open_defaults_to_the_tip_and_resumes_by_id(manager: SessionManager, store: Path) -> None:
    opened = manager.open()
    assert opened.base == tip(store) and opened.session.startswith("s-")
    named = manager.open(id="agent-1")
    assert manager.open(id="agent-1") == named
    first = tip(store)
    Store.open(store).commit({"areas/inbox/beta.html": BETA})
    with pytest.raises(WriteConflict):
        manager.open(id="agent-1", base=tip(store))
    assert manager.open(id="old", base=first).base == first
    with pytest.raises(GitFailure):
        manager.open(base="0" * 40)
    assert [s.session for s in manager.list().sessions] == sorted(
        [opened.session, "agent-1", "old"]
    )


def test_apply_appends_and_the_view_reads_through(manager: SessionManager) -> None:
    s = manager.open().session
    result = manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    assert result.violations == () and result.ops == 1
    assert result.paths == ("areas/inbox/beta.html",)
    view = manager.view(s)
    assert view.record("areas/inbox/beta.html") is not None
    assert view.record("areas/inbox/alpha.html") is not None
    result = manager.apply(
        s,
        [
            LinkOp(path="areas/inbox/beta.html", rel="relates_to", href="/areas/inbox/alpha.html"),
            Label(path="areas/inbox/alpha.html", entity="topic:greek"),
            Move(path="areas/inbox/alpha.html", to="areas/letters/alpha.html"),
        ],
    )
    assert result.violations == () and result.ops == 4
    view = manager.view(s)
    assert view.record("areas/inbox/alpha.html") is None
    moved = view.record("areas/letters/alpha.html")
    assert moved is not None and "topic:greek" in moved.entities
    # Another session's view is untouched: overlays are per session.
    other = manager.open().session
    assert manager.view(other).record("areas/inbox/beta.html") is None


def test_every_violation_kind_at_apply(manager: SessionManager) -> None:
    s = manager.open().session
    broken = (
        "<!doctype html><html><head><title>x</title></head><body><p>no article</p></body></html>"
    )
    result = manager.apply(
        s,
        [
            Put(path="areas/inbox/ok.html", html=BETA),  # 0: fine on its own
            Put(path=".memhtml/x.html", html=BETA),  # 1: reserved
            Put(path="areas/index.html", html=BETA),  # 2: reserved
            Put(path="resources/sitemap.xml", html=BETA),  # 3: reserved
            Put(path="areas/inbox/bad.html", html=broken),  # 4: format, every reason
            Put(path="areas/inbox/copy.html", html=ALPHA),  # 5: duplicate of alpha
            Put(
                path="areas/inbox/alpha.html",
                html=memory_html("Alpha", "Alpha is a letter.", **WRITTEN),
            ),  # 6
            Put(
                path="notabucket/x.html", html=memory_html("N", "Nothing to see here.", **WRITTEN)
            ),  # 7
            Put(path="areas/inbox/ok-again.html", html=BETA),  # 8: duplicate within the batch
            UnlinkOp(path="areas/inbox/alpha.html", rel="relates_to", href="/areas/x.html"),  # 9
            Archive(path="areas/inbox/capital.html", to="archive/2026/areas/other.html"),  # 10
            Move(path="areas/inbox/capital.html", to="archive/2026/areas/inbox/capital.html"),
            LinkOp(path="areas/nope.html", rel="relates_to", href="/areas/inbox/alpha.html"),
        ],
    )
    assert kinds(result.violations) == [
        ("reserved-path", ".memhtml/x.html", 1),
        ("reserved-path", "areas/index.html", 2),
        ("reserved-path", "resources/sitemap.xml", 3),
        ("format", "areas/inbox/bad.html", 4),
        ("duplicate", "areas/inbox/copy.html", 5),
        ("claim-edit", "areas/inbox/alpha.html", 6),
        ("format", "notabucket/x.html", 7),
        ("duplicate", "areas/inbox/ok-again.html", 8),
        ("format", "areas/inbox/alpha.html", 9),
        ("format", "areas/inbox/capital.html", 10),
        ("format", "areas/inbox/capital.html", 11),
        ("format", "areas/nope.html", 12),
    ]
    by_op = {v.op: v for v in result.violations}
    assert len(by_op[4].reasons) >= 2  # every violation of the file, not the first
    assert by_op[5].existing == "areas/inbox/alpha.html"
    assert by_op[8].existing == "areas/inbox/ok.html"
    assert result.ops == 0


def test_batch_cap(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock(), cap=3)
    s = manager.open().session
    puts = [
        Put(path=f"areas/p{i}.html", html=memory_html(f"P{i}", f"Fact number {i}.", **WRITTEN))
        for i in range(4)
    ]
    result = manager.apply(s, puts)
    assert kinds(result.violations) == [("batch-cap", None, None)]
    assert result.violations[0].count == 4 and result.violations[0].cap == 3
    assert manager.apply(s, puts[:2]).ops == 2
    again = manager.apply(s, puts[2:])
    assert again.violations[0].kind == "batch-cap" and again.violations[0].count == 4


def test_apply_is_all_or_nothing(manager: SessionManager) -> None:
    s = manager.open().session
    result = manager.apply(
        s, [Put(path="areas/inbox/beta.html", html=BETA), Put(path="areas/x", html=BETA)]
    )
    assert result.ops == 0 and len(result.violations) == 1
    assert manager.view(s).record("areas/inbox/beta.html") is None
    assert manager.info(s).ops == 0


def test_write_is_rendered_placed_and_deduped(manager: SessionManager, store: Path) -> None:
    s = manager.open().session
    write = Write(
        title="Gamma", type="semantic", claim="Gamma is the third letter.", entities=["system:x"]
    )
    first = manager.apply(s, [write])
    assert first.paths == ("areas/inbox/gamma.html",) and first.ops == 1
    record = manager.view(s).record("areas/inbox/gamma.html")
    assert record is not None and record.claim == "Gamma is the third letter."
    again = manager.apply(s, [write])
    assert again.ops == 1 and again.violations == ()
    assert [(d.op, d.existing) for d in again.deduped] == [(1, "areas/inbox/gamma.html")]
    assert again.paths == ("areas/inbox/gamma.html",)
    # A write of content already on the branch comes back as that path, writing nothing.
    alpha = Write(
        title="Alpha",
        type="semantic",
        claim="Alpha is the first letter of the Greek alphabet.",
        entities=["system:headd"],
    )
    dup = manager.apply(s, [alpha])
    assert dup.ops == 1 and dup.deduped[0].existing == "areas/inbox/alpha.html"
    # A put of the same content is a violation, not a dedupe.
    put = manager.apply(s, [Put(path="areas/inbox/alpha-2.html", html=ALPHA)])
    assert put.violations[0].kind == "duplicate"


def test_two_writes_with_one_title_get_two_paths(manager: SessionManager) -> None:
    s = manager.open().session
    result = manager.apply(
        s,
        [
            Write(title="Capital of India", type="semantic", claim="Delhi is big."),
            Write(title="Capital of India", type="semantic", claim="Delhi is old."),
        ],
    )
    # capital.html is taken by the seed file; slug capital-of-india is free, then -2.
    assert result.paths == (
        "areas/inbox/capital-of-india.html",
        "areas/inbox/capital-of-india-2.html",
    )


def test_archive_defaults_are_filled(manager: SessionManager) -> None:
    s = manager.open().session
    result = manager.apply(s, [Archive(path="areas/inbox/alpha.html")])
    assert result.violations == () and result.paths == ("archive/2026/areas/inbox/alpha.html",)
    archived = manager.view(s).record("archive/2026/areas/inbox/alpha.html")
    assert archived is not None and archived.archived and archived.archived_at is not None
    missing = manager.apply(s, [Archive(path="areas/inbox/none.html")])
    assert kinds(missing.violations) == [("format", "areas/inbox/none.html", 1)]


def test_rebase_moves_the_base_and_rejudges(manager: SessionManager, store: Path) -> None:
    s = manager.open().session
    t = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    manager.apply(
        t,
        [
            Write(
                title="B",
                type="semantic",
                claim="Beta is the second letter of the Greek alphabet.",
                entities=["system:headd"],
            ),
            Put(
                path="areas/inbox/delta.html",
                html=memory_html("Delta", "Delta is the fourth letter.", **WRITTEN),
            ),
        ],
    )
    Store.open(store).commit({"areas/inbox/beta.html": BETA})
    rebased = manager.rebase(s)
    assert rebased.base == tip(store)
    assert kinds(rebased.violations) == [("duplicate", "areas/inbox/beta.html", 0)]
    assert rebased.ops == 1
    # A write whose content landed meanwhile is dropped as deduped on rebase.
    other = manager.rebase(t)
    assert other.violations == () and other.ops == 1
    assert [(d.op, d.existing) for d in other.deduped] == [(0, "areas/inbox/beta.html")]


def test_close_and_unknown_sessions(manager: SessionManager, store: Path) -> None:
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    closed = manager.close(s)
    assert closed.closed and closed.dropped_ops == 1
    assert manager.list().sessions == ()
    assert not (store / ".memhtml/headd/sessions" / f"{s}.jsonl").exists()
    for call in (
        lambda: manager.apply(s, []),
        lambda: manager.commit(s),
        lambda: manager.rebase(s),
        lambda: manager.close(s),
        lambda: manager.view(s),
    ):
        with pytest.raises(SessionNotFound):
            call()


def test_sessions_survive_a_restart(store: Path) -> None:
    first = SessionManager(store, clock=TickingClock())
    s = first.open(id="keep").session
    first.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    first.apply(
        s, [LinkOp(path="areas/inbox/beta.html", rel="supports", href="/areas/inbox/alpha.html")]
    )
    gone = first.open(id="gone").session
    first.close(gone)
    before = first.info(s)
    del first
    second = SessionManager(store, clock=TickingClock())
    assert [x.session for x in second.list().sessions] == ["keep"]
    assert second.info(s) == before
    record = second.view(s).record("areas/inbox/beta.html")
    assert record is not None and any(link.rel == "supports" for link in record.links)
    assert second.recovered == ()
    result = second.commit(s)
    assert result.outcome == "committed" and "areas/inbox/beta.html" in (result.paths or ())


def test_a_busy_session_answers_locked(manager: SessionManager) -> None:
    s = manager.open().session
    entered = threading.Event()
    release = threading.Event()

    clock = TickingClock()
    main = threading.get_ident()

    def slow_clock():
        if threading.get_ident() != main:
            entered.set()
            release.wait(5)
        return clock()

    manager.clock = slow_clock
    worker = threading.Thread(
        target=manager.apply, args=(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    )
    worker.start()
    assert entered.wait(5)
    try:
        with pytest.raises(SessionLocked):
            manager.commit(s)
        # Another session is not blocked by it.
        other = manager.open()
        assert other.session != s
    finally:
        release.set()
        worker.join(5)
    assert manager.info(s).ops == 1


def test_concurrent_opens_of_one_id_write_one_open_event(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    barrier = threading.Barrier(8)
    answers = []

    def open_same() -> None:
        barrier.wait()
        try:
            answers.append(manager.open(id="same").session)
        except SessionLocked:
            answers.append("locked")

    threads = [threading.Thread(target=open_same) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert "same" in answers
    lines = (store / ".memhtml/headd/sessions/same.jsonl").read_text().splitlines()
    assert len(lines) == 1 and '"ev":"open"' in lines[0]
    assert [s.session for s in SessionManager(store).list().sessions] == ["same"]


def test_a_log_torn_in_its_first_line_is_forgotten(store: Path) -> None:
    logs = store / ".memhtml/headd/sessions"
    logs.mkdir(parents=True)
    (logs / "torn.jsonl").write_bytes(b'{"ev":"open","sess')
    manager = SessionManager(store, clock=TickingClock())
    assert manager.list().sessions == ()
    assert not (logs / "torn.jsonl").exists()
    assert manager.open(id="torn").session == "torn"


def test_a_new_branch_is_created_by_its_first_commit(store: Path) -> None:
    manager = SessionManager(store, ref="curate/2026-11-30", clock=TickingClock())
    main = tip(store)
    s = manager.open(base=main).session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    result = manager.commit(s)
    assert result.outcome == "committed" and result.worktree_synced is False
    assert tip(store, "refs/heads/curate/2026-11-30") == result.sha
    assert tip(store) == main


def test_a_write_to_an_occupied_path_is_that_ops_violation(manager: SessionManager) -> None:
    s = manager.open().session
    result = manager.apply(
        s,
        [
            Write(title="Fine", type="semantic", claim="This one is fine.", entities=["system:x"]),
            Write(title="Taken", type="semantic", claim="Taken.", path="areas/inbox/alpha.html"),
        ],
    )
    assert kinds(result.violations) == [("format", "areas/inbox/alpha.html", 1)]
    assert "occupied" in result.violations[0].reasons[0]
    assert result.ops == 0


def test_a_write_the_doors_refuse_is_refused_with_every_reason(manager: SessionManager) -> None:
    """memhtml's write doors refuse an unknown type and a malformed due date before rendering
    (the parser alone would drop the due date silently); nothing is appended."""
    s = manager.open().session
    result = manager.apply(s, [Write(title="Odd", type="gossip", claim="Nobody knows this.")])
    assert result.ops == 0
    assert len(result.violations) == 1
    assert any("unknown memory type: gossip" in r for r in result.violations[0].reasons)
