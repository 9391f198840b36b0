"""recall: the disclosure fold under budgets, over the same fusion as search."""

from __future__ import annotations

from pathlib import Path

import pytest
from headd_plane.disclosure import (
    ARC_BODY_BUDGET,
    MAX_PER_ENTITY,
    DisclosureCandidate,
    fold_disclosure,
)
from headd_plane.plane import open_plane
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html
from support.stores import Store

from headd.wire.plane_answers import RecallLine

NOW = "2026-11-30T10:00:00.000Z"

candidates = st.lists(
    st.builds(
        DisclosureCandidate,
        path=st.uuids().map(lambda u: f"areas/{u}.html"),
        title=st.just("t"),
        claim=st.just("c"),
        memory_type=st.just("semantic"),
        disclosure_text=st.text(max_size=60),
        entity_names=st.lists(st.sampled_from(["a", "b", "c"]), max_size=2).map(tuple),
    ),
    max_size=20,
)


@settings(max_examples=80, deadline=None)
@given(candidates, st.integers(0, 400))
def test_fold_keeps_rank_order_budget_and_entity_cap(
    ranked: list[DisclosureCandidate], budget: int
) -> None:
    fold = fold_disclosure(ranked, budget)
    assert fold.spent_chars <= budget
    quoted = [d.path for d in fold.disclosed]
    listed = [line.path for line in fold.index_lines]
    assert sorted(quoted + listed) == sorted(c.path for c in ranked)
    rank = {c.path: i for i, c in enumerate(ranked)}
    assert quoted == sorted(quoted, key=rank.__getitem__)
    assert listed == sorted(listed, key=rank.__getitem__)
    per_entity: dict[str, int] = {}
    for candidate in ranked:
        if candidate.path in quoted:
            for name in set(candidate.entity_names):
                per_entity[name] = per_entity.get(name, 0) + 1
    assert all(n <= MAX_PER_ENTITY for n in per_entity.values())
    assert fold.truncated == bool(listed)


def test_a_candidate_that_does_not_fit_leaves_room_for_a_later_shorter_one() -> None:
    ranked = [
        DisclosureCandidate("a", "A", "ca", "semantic", "x" * 10),
        DisclosureCandidate("b", "B", "cb", "semantic", "y" * 50),
        DisclosureCandidate("c", "C", "cc", "semantic", "z" * 5),
    ]
    fold = fold_disclosure(ranked, 20)
    assert [d.path for d in fold.disclosed] == ["a", "c"]
    assert fold.index_lines == [RecallLine(path="b", title="B", claim="cb", memory_type="semantic")]
    assert fold.spent_chars == 15


def memory(title: str, kind: str, claim: str, n: int) -> str:
    """A memory with a summary, an aside and a facet: what recall may and may not quote."""
    return memory_html(
        title,
        updated="2026-11-30T09:00:00Z",
        memory_type=kind,
        entities=("service:ledger",),
        article=f"<p><mark>{claim}</mark></p>\n"
        f"<details><summary>Why the ledger moved</summary><p>SECRET-BACKSTORY {n}</p></details>\n"
        f"<aside>CAVEAT-ONLY {n}</aside>\n"
        f"<dl><dt>owner</dt><dd>team-{n}</dd></dl>",
    )


@pytest.fixture
def plane(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    files = {
        f"areas/ledger/m{n}.html": memory(
            f"Ledger {n}", "semantic", f"The ledger fact number {n}.", n
        )
        for n in range(4)
    }
    files["areas/arcs/ledger-arc.html"] = memory("Ledger arc", "arc", "The ledger keeps moving.", 9)
    store.commit(files)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    return plane


def test_recall_quotes_only_disclosure_text_and_caps_per_entity(plane) -> None:  # type: ignore[no-untyped-def]
    pack = plane.recall("ledger fact")
    wire = pack.answer("sha")
    bodies = " ".join(e.body for e in wire.entries)
    assert "SECRET-BACKSTORY" not in bodies and "CAVEAT-ONLY" not in bodies
    assert "Why the ledger moved" in bodies and "owner: team-" in bodies
    assert len(pack.memories.disclosed) == MAX_PER_ENTITY  # all four share service:ledger
    assert len(pack.memories.index_lines) == 2 and pack.truncated
    assert [e.path for e in pack.arcs.disclosed] == ["areas/arcs/ledger-arc.html"]
    assert pack.degraded
    assert wire.spent == pack.arcs.spent_chars + pack.memories.spent_chars


def test_recall_budget_bounds_ordinary_memories_not_arcs(plane) -> None:  # type: ignore[no-untyped-def]
    pack = plane.recall("ledger fact", budget_chars=10)
    assert pack.memories.disclosed == [] and pack.memories.spent_chars == 0
    assert len(pack.arcs.disclosed) == 1 and pack.arcs.spent_chars <= ARC_BODY_BUDGET
