"""The head gate (memhtml's packages/head/tests/gate.test.ts, ported) over real views."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pygit2
import pytest
from support.head_corpus import MapView, make_corpus, memory_for
from support.memory import memory_html

from headd.errors import DiscriminationFailed
from headd.head.gate import (
    HEAD_GATE_TOLERANCE,
    FellOut,
    HeadGateProbe,
    SupersededOutranks,
    describe_head_gate_failure,
    gate_heads,
    head_gate_failed,
    probe_query_for,
    probes_for,
    round4,
    score_probes,
)
from headd.head.indexes import indexes_from_records, view_of
from headd.head.version import advance_head, load_head, parse_record
from headd.record import MemoryRecord

AT = "2026-03-01T12:00:00Z"


def record(path: str, *, title: str, claim: str, at: str = AT, links: tuple = ()) -> MemoryRecord:  # type: ignore[type-arg]
    return parse_record(
        path, memory_html(content_hash=True, title=title, claim=claim, created=at, links=links)
    )


def view(records: list[MemoryRecord], sha: str):  # type: ignore[no-untyped-def]
    return view_of(indexes_from_records(records), sha)


WORDS = [
    ("harbor", "Harbor cranes unload at dawn."),
    ("glacier", "Glacier ice calves in summer."),
    ("orchard", "Orchard rows run north to south."),
    ("furnace", "Furnace bricks crack under load."),
    ("lantern", "Lantern oil burns clean."),
    ("compass", "Compass needles drift near ore."),
    ("quarry", "Quarry stone weathers gray."),
    ("saddle", "Saddle leather softens with wax."),
    ("turbine", "Turbine blades pitch with wind."),
    ("velvet", "Velvet nap catches light."),
]


@pytest.fixture(scope="module")
def distinct() -> list[MemoryRecord]:
    return [
        record(
            f"areas/inbox/{word}.html",
            title=word,
            claim=claim,
            at=f"2026-03-{index + 1:02d}T12:00:00Z",
        )
        for index, (word, claim) in enumerate(WORDS)
    ]


def test_probe_query_is_the_title_else_the_first_sentence_of_the_claim() -> None:
    titled = record("areas/inbox/t.html", title="Rollback order", claim="A. B.")
    assert probe_query_for(titled) == "Rollback order"
    assert probe_query_for(msgspec.structs.replace(titled, title="  ")) == "A."
    assert (
        probe_query_for(msgspec.structs.replace(titled, title="", claim="No terminal punctuation"))
        == "No terminal punctuation"
    )
    assert (
        probe_query_for(
            msgspec.structs.replace(titled, title="", claim="Drain the VIP first! Then revert.")
        )
        == "Drain the VIP first!"
    )


def test_round4_rounds_half_up_as_math_round() -> None:
    assert round4(0.95) == 0.95 and round4(1 / 3) == 0.3333 and round4(0.00005) == 0.0001
    assert round4(2 / 3) == 0.6667 and round4(0.0) == 0.0


def test_probes_are_records_active_in_both_versions_in_a_seeded_order(distinct) -> None:  # type: ignore[no-untyped-def]
    only_landed, archived_later, *shared = distinct
    base = view([*shared, archived_later], "base")
    moved = msgspec.structs.replace(
        archived_later, path=f"archive/2026/{archived_later.path}", archived=True
    )
    landed = view([*shared, only_landed, moved], "landed")
    probes = probes_for(base, landed, seed=1, count=100)
    assert sorted(p.path for p in probes) == sorted(r.path for r in shared)
    assert probes_for(base, landed, seed=1, count=100) == probes
    reseeded = probes_for(base, landed, seed=2, count=100)
    assert sorted(p.path for p in reseeded) == sorted(p.path for p in probes) and reseeded != probes
    assert probes_for(base, landed, seed=1, count=3) == probes[:3]
    import hashlib

    keys = [hashlib.sha1(f"1:{p.path}".encode()).hexdigest()[:8] for p in probes]
    assert keys == sorted(keys)


def test_an_unchanged_corpus_passes_with_equal_numbers(distinct) -> None:  # type: ignore[no-untyped-def]
    report = gate_heads(MapView(distinct, "a"), MapView(distinct, "b"))
    assert (report.mode, report.passed, report.base, report.landed, report.probes) == (
        "head",
        True,
        "a",
        "b",
        10,
    )
    assert (report.mrr, report.mrr_before, report.floor) == (1, 1, 1 - HEAD_GATE_TOLERANCE)
    assert (
        report.inversions == ()
        and report.inversions_before == 0
        and (report.added, report.removed) == (0, 0)
    )
    assert all(r.rank_before == 1 and r.rank_after == 1 for r in report.results)
    assert describe_head_gate_failure(report) == "head gate over 10 probe(s): passed"


def _twin() -> MemoryRecord:
    return record(
        "areas/inbox/harbor2.html",
        title="harbor",
        claim="Harbor cranes unload in the harbor at dusk.",
        at="2026-06-01T12:00:00Z",
    )


def test_a_new_record_pushing_a_probe_out_of_the_top_k_fails(distinct) -> None:  # type: ignore[no-untyped-def]
    target = distinct[0]
    report = gate_heads(
        MapView(distinct, "base"), MapView([*distinct, _twin()], "landed"), k=1, tolerance=1
    )
    assert report.floor == 0 and report.mrr == 0.9 and not report.passed
    assert report.inversions_before == 0
    assert report.inversions == (FellOut(target.path, probe_query_for(target)),)
    assert report.added == 1
    reason = describe_head_gate_failure(report)
    assert "1 inversion(s) against 0 before" in reason
    assert f"{target.path} fell out of the top 1" in reason
    error = head_gate_failed(report)
    assert isinstance(error, DiscriminationFailed) and error.code == "ERR_DISCRIMINATION_FAILED"
    assert error.message == reason
    assert error.details["inversions"] == [
        {"kind": "fell-out", "path": target.path, "query": "harbor"}
    ]
    assert error.to_wire()["data"]["details"]["mrr"] == 0.9


def test_a_superseded_record_outranking_its_superseder_is_an_inversion(distinct) -> None:  # type: ignore[no-untyped-def]
    target = distinct[0]
    older = record(
        "areas/inbox/harbor2-old.html",
        title="harbor",
        claim="Cranes unload at noon.",
        at="2025-01-01T12:00:00Z",
    )
    newer = record(
        "areas/inbox/harbor2-new.html",
        title="harbor",
        claim="Harbor cranes unload in the harbor at midnight.",
        at="2026-09-01T12:00:00Z",
    )
    superseding_older = record(
        target.path, title="harbor", claim=target.claim, links=(("supersedes", f"/{older.path}"),)
    )
    superseding_newer = record(
        target.path, title="harbor", claim=target.claim, links=(("supersedes", f"/{newer.path}"),)
    )
    base = MapView(distinct, "base")
    rest = distinct[1:]
    below = gate_heads(base, MapView([*rest, superseding_older, older], "below"))
    assert below.inversions == () and below.passed
    above = gate_heads(base, MapView([*rest, superseding_newer, newer], "above"))
    assert above.inversions == (
        SupersededOutranks(target.path, probe_query_for(target), newer.path, 2, 1),
    )
    assert not above.passed
    assert (
        f"{newer.path} outranks {target.path}, which supersedes it"
        in describe_head_gate_failure(above)
    )
    wire = msgspec.json.decode(msgspec.json.encode(above))
    assert wire["inversions"][0] == {
        "kind": "superseded-outranks",
        "path": target.path,
        "query": "harbor",
        "by": newer.path,
        "rank": 2,
        "by_rank": 1,
    }


def test_an_mrr_drop_within_the_tolerance_passes_and_past_it_fails(distinct) -> None:  # type: ignore[no-untyped-def]
    base, landed = MapView(distinct, "base"), MapView([*distinct, _twin()], "landed")
    within = gate_heads(base, landed, tolerance=0.06)
    assert (within.mrr_before, within.mrr, within.floor, within.passed) == (1, 0.95, 0.94, True)
    assert within.inversions == ()
    past = gate_heads(base, landed, tolerance=0.02)
    assert (past.mrr_before, past.mrr, past.floor, past.passed) == (1, 0.95, 0.98, False)
    assert (
        "MRR 0.95 at landed is below the floor of 0.98 (1 at base minus 0.02)"
        in describe_head_gate_failure(past)
    )


def test_zero_probes_pass(distinct) -> None:  # type: ignore[no-untyped-def]
    report = gate_heads(MapView([], "empty"), MapView(distinct, "full"))
    assert (report.passed, report.probes, report.mrr, report.mrr_before, report.added) == (
        True,
        0,
        0,
        0,
        10,
    )


def test_a_probe_absent_from_the_top_k_ranks_none(distinct) -> None:  # type: ignore[no-untyped-def]
    scored = score_probes(view(distinct, "v"), [HeadGateProbe("areas/inbox/none.html", "zzz")], 10)
    assert scored.ranks == (None,) and scored.mrr == 0


def test_at_most_five_inversions_are_named() -> None:
    records = [
        record(f"areas/inbox/n{i}.html", title="Same note", claim=f"Note {i} says the same.")
        for i in range(8)
    ]
    report = gate_heads(MapView(records, "a"), MapView(records, "b"), k=1)
    assert len(report.inversions) == report.inversions_before == 7
    crowded = gate_heads(MapView(records[:1], "a"), MapView(records, "b"), k=1)
    text = describe_head_gate_failure(
        msgspec.structs.replace(crowded, inversions=report.inversions)
    )
    assert text.count("fell out") == 5


def test_gate_between_two_commits_of_a_real_repository(tmp_path: Path) -> None:
    repo, sha, files = make_corpus(tmp_path, 30)
    base = load_head(repo.repo, sha)
    twin = memory_for(4)
    landed_sha = repo.commit(
        [("areas/inbox/twin.html", twin.html.replace("Fact 4", "Fact 4 copy"))]
    )
    landed = advance_head(repo.repo, base, landed_sha)
    report = gate_heads(base, landed, probes=30)
    assert report.base == sha and report.landed == landed_sha
    assert report.probes == 27 and report.added == 1 and report.removed == 0
    assert report.mrr <= report.mrr_before
    assert isinstance(repo.repo, pygit2.Repository)


def test_the_gate_ranks_with_the_seed_exact_search_even_past_40() -> None:
    """The gate's answers are memhtml's: seed-exact search, whose lexical arm stops at 40 even
    when ``k`` is larger (the hybrid default would rank the 41st record; the gate must not)."""
    records = [
        record(f"areas/inbox/z-{i:03d}.html", title=f"zircon {i}", claim="zircon " * (1 + i))
        for i in range(50)
    ]
    landed = view(records, "v")
    # the shortest record, "zircon" once: BM25 ranks it below the 40 more zircon-dense ones
    probe = HeadGateProbe("areas/inbox/z-000.html", "zircon")
    scored = score_probes(landed, [probe], k=60)
    assert scored.ranks == (None,)
    assert scored.inversions == (FellOut(probe.path, probe.query),)
