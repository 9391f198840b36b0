"""The deterministic phases as pure functions: the near-duplicate guards; (properties) that the
phases in order never lose a memory, never move, fold or archive a task or an arc, and leave every
folded or evicted path resolvable; and the glossary's reprieve rule (past ``valid-until``: 14 more
days and one more reprieve when the score reaches 0.5 and fewer than three were given, else an
eviction with its stamps; never an arc or a task).

Seen red: with an eviction that deletes instead of archiving (the first property), with the arc
dropped from the protected types (the first), and with the reprieve ceiling at four (the last)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.head.indexes import IndexedView, indexes_from_records
from headd.head.successors import resolve
from headd.memfile.archive import archive_path, archive_stamps, original_path
from headd.memfile.sidecar import SidecarEntry
from headd.sleep.catalog import PHASES
from headd.sleep.phases import (
    DETERMINISTIC,
    REPRIEVE_FLOOR,
    Context,
    dedup_merge,
    reprieve,
    reprieve_score,
)
from headd.sleep.working import MOVED, Working
from headd.store.ports import parse_memory

DAY = date(2026, 12, 4)


def working_of(files: dict[str, str]) -> Working:
    records = [parse_memory(path, html) for path, html in files.items()]
    texts = {record.blob_sha: files[record.path] for record in records}
    return Working(records, texts.__getitem__)


def test_near_duplicates_fold_but_never_a_negation_or_a_changed_number() -> None:
    claims = {
        "areas/inbox/a.html": "The pool holds 40 connections per pod.",
        "areas/inbox/b.html": "The pool holds 40 connections for each pod.",
        "areas/inbox/c.html": "The pool does not hold 40 connections per pod.",
        "areas/inbox/d.html": "The pool holds 64 connections per pod.",
    }
    files = {
        path: memory_html(f"Pool {i}", claim, created=f"2026-11-0{i + 1}T09:00:00Z")
        for i, (path, claim) in enumerate(claims.items())
    }
    same = np.ones(8, dtype=np.float32) / np.sqrt(8)
    ctx = Context(DAY, "sleep/2026-12-04", vectors={path: same for path in files})
    change = dedup_merge(working_of(files), ctx)
    folded = {t.path: t.into for t in change.touches if t.kind == "folded"}
    assert folded == {"areas/inbox/b.html": "areas/inbox/a.html"}
    without_vectors = dedup_merge(working_of(files), Context(DAY, "sleep/2026-12-04"))
    assert without_vectors.empty


ENTITIES = ["service:alpha", "service:beta", "service:gamma"]


@st.composite
def stores(draw: st.DrawFn) -> dict[str, str]:
    count = draw(st.integers(min_value=1, max_value=10))
    files: dict[str, str] = {}
    paths = [
        ("areas/inbox" if draw(st.booleans()) else f"resources/{draw(st.sampled_from('xyz'))}")
        + f"/m{i}.html"
        for i in range(count)
    ]
    claims: list[str] = []
    for i, path in enumerate(paths):
        claim = f"Fact number {i} holds."
        if claims and draw(st.booleans()):
            claim = draw(st.sampled_from(claims))  # an exact duplicate
        claims.append(claim)
        metas = {}
        if draw(st.booleans()):
            metas["memhtml-valid-until"] = draw(st.sampled_from(["2026-11-01", "2027-01-01"]))
        links = []
        if draw(st.booleans()):
            target = draw(st.sampled_from([*paths, "resources/gone/missing.html"]))
            if target != path:
                links.append(("relates_to", "/" + target))
        memory_type = draw(st.sampled_from(["semantic", "semantic", "task", "episodic", "arc"]))
        files[path] = memory_html(
            f"Memory {i}",
            claim,
            created=draw(st.sampled_from(["2024-01-01T00:00:00Z", "2026-11-30T00:00:00Z"])),
            memory_type=memory_type,
            task_status="todo" if memory_type == "task" else None,
            metas=metas,
            entities=draw(st.lists(st.sampled_from(ENTITIES), max_size=2, unique=True)),
            links=links,
        )
    return files


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stores())
def test_no_phase_sequence_loses_a_memory_or_moves_a_task(files: dict[str, str]) -> None:
    """Every base memory is at its path, where placement moved it, or archived; a task or an arc
    is never moved, folded or archived; a folded or evicted path resolves (``resolve``) to a
    memory the store still holds, its live successor or its archive path."""
    working = working_of(files)
    ctx = Context(DAY, "sleep/2026-12-04")
    moved: dict[str, str] = {}
    for name in PHASES:
        phase = DETERMINISTIC.get(name)
        if phase is None:
            continue
        change = phase(working, ctx)
        assert not (change.removes - {t.path for t in change.touches}), name
        for touch in change.touches:
            if touch.kind == MOVED and touch.to is not None:
                moved[touch.path] = touch.to
        working.apply(change)
    held = {record.path for record in working.records()}
    view = IndexedView(indexes_from_records(working.records()), None)
    for path, html in files.items():
        record = parse_memory(path, html)
        if record.memory_type in ("task", "arc"):  # never moved, folded or archived
            kept = working.record(path)
            assert kept is not None and kept.content_hash == record.content_hash
            assert not kept.archived
            continue
        archived = {p for p in held if original_path(p) == path}
        assert path in held or moved.get(path) in held or archived, path
        if path not in held and path not in moved:
            end = resolve(view, path).path
            assert view.record(end) is not None, (path, end)


@st.composite
def expiring(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, SidecarEntry]]:
    """Memories with a ``valid-until`` before, on or after the run's date, any importance and
    reprieve count, some with usage rows."""
    files: dict[str, str] = {}
    usage: dict[str, SidecarEntry] = {}
    for i in range(draw(st.integers(min_value=1, max_value=8))):
        path = f"resources/ops/m{i}.html"
        memory_type = draw(st.sampled_from(["semantic", "semantic", "episodic", "arc", "task"]))
        metas = {
            "memhtml-valid-until": draw(
                st.sampled_from(["2026-11-01", "2026-12-03", "2026-12-04", "2027-01-01"])
            ),
            "memhtml-importance": str(draw(st.integers(min_value=1, max_value=10))),
            "memhtml-reprieves": str(draw(st.integers(min_value=0, max_value=4))),
        }
        files[path] = memory_html(
            f"Memory {i}",
            f"Fact number {i} holds.",
            memory_type=memory_type,
            task_status="todo" if memory_type == "task" else None,
            metas=metas,
        )
        if draw(st.booleans()):
            used = draw(st.sampled_from([None, "2026-12-01T00:00:00Z", "2026-03-01T00:00:00Z"]))
            usage[path] = SidecarEntry(
                path,
                draw(st.integers(min_value=0, max_value=40)),
                0,
                draw(st.sampled_from([0.0, 0.5, 1.0])),
                used,
                None,
                "2026-12-01T00:00:00Z",
            )
    return files, usage


@settings(max_examples=60, deadline=None)
@given(expiring())
def test_reprieve_extends_or_evicts_exactly_the_expired(
    drawn: tuple[dict[str, str], dict[str, SidecarEntry]],
) -> None:
    files, usage = drawn
    working = working_of(files)
    ctx = Context(DAY, "sleep/2026-12-04", usage=usage)
    change = reprieve(working, ctx)
    for path, html in files.items():
        record = parse_memory(path, html)
        expired = record.valid_until is not None and record.valid_until[:10] < DAY.isoformat()
        if record.memory_type in ("arc", "task") or not expired:
            assert path not in change.writes and path not in change.removes, path
            continue
        if (
            reprieve_score(record, ctx) >= REPRIEVE_FLOOR and record.reprieves < 3
        ):  # the glossary's ceiling
            kept = parse_memory(path, change.writes[path])
            assert kept.valid_until is not None and kept.valid_until[:10] == "2026-12-18"
            assert kept.reprieves == record.reprieves + 1 and not kept.archived
            assert path not in change.removes
        else:
            to = archive_path(path, 2026)
            assert path in change.removes and original_path(to) == path
            gone = parse_memory(to, change.writes[to])
            assert gone.archived and gone.archived_at and gone.updated_at
    reprieved = sum(1 for p in change.writes if p in files)
    assert change.counts == {"reprieved": reprieved, "evicted": len(change.removes)}


def test_an_eviction_onto_a_taken_archive_path_takes_the_next_suffix() -> None:
    """The glossary's bend in the archive path rule: a sleep phase adds ``-2``, ``-3``… before
    ``.html`` when the archive path is taken (the same path archived earlier that year), and the
    suffixed path no longer maps back to the original."""
    path = "resources/ops/freeze.html"
    earlier = memhtml_archived(memory_html("Freeze, before", "The old freeze held."))
    files = {
        path: memory_html(
            "Freeze", "The freeze holds.", metas={"memhtml-valid-until": "2026-11-01"}
        ),
        "archive/2026/resources/ops/freeze.html": earlier,
        "archive/2026/resources/ops/freeze-2.html": earlier.replace("before", "before that"),
    }
    change = reprieve(working_of(files), Context(DAY, "sleep/2026-12-04"))
    to = "archive/2026/resources/ops/freeze-3.html"
    assert change.removes == {path} and to in change.writes
    assert parse_memory(to, change.writes[to]).archived
    assert original_path(to) != path
    assert change.writes.keys() == {to}  # the earlier copies stand as they were


def memhtml_archived(html: str) -> str:
    return archive_stamps(html, datetime(2026, 3, 1, tzinfo=UTC))
