"""The deterministic phases as pure functions: the near-duplicate guards, and (property) that the
phases in order never lose a memory or move, fold or archive a task, whatever the store."""

from __future__ import annotations

from datetime import date

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.memfile.archive import original_path
from headd.sleep.catalog import PHASES
from headd.sleep.phases import DETERMINISTIC, Context, dedup_merge
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
        memory_type = draw(st.sampled_from(["semantic", "semantic", "task", "episodic"]))
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
    for path, html in files.items():
        record = parse_memory(path, html)
        if record.memory_type == "task":  # never moved, folded or archived; links may be repaired
            kept = working.record(path)
            assert kept is not None and kept.content_hash == record.content_hash
            assert not kept.archived
            continue
        archived = {p for p in held if original_path(p) == path}
        assert path in held or moved.get(path) in held or archived, path
