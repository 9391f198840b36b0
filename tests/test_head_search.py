"""search_head in its seed-exact mode: memhtml's head search tests
(packages/head/tests/search.test.ts), ported. They pin the mode by name (``SEED_EXACT``), which
the head gate uses; the hybrid default has its own tests (``test_head_search_hybrid.py``).

Every expected score is computable by hand from ``weight / (rank + 60)``; the golden is memhtml's
own answer over the generated corpus, compared path for path, arm for arm, score within 1e-12.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.head_corpus import MapView, memory_for
from support.memory import memory_html

from headd.head.lexical import STOP_WORDS, tokenize
from headd.head.overlay import with_overlay
from headd.head.search import (
    LEXICAL_ARM_LIMIT,
    LEXICAL_WEIGHT,
    RRF_K,
    SEED_EXACT,
    VECTOR_ARM_LIMIT,
    VECTOR_WEIGHT,
)
from headd.head.search import search_head as any_mode_search
from headd.head.version import parse_record, version_from_records
from headd.ops import Put
from headd.record import MemoryRecord

search_head = functools.partial(any_mode_search, mode=SEED_EXACT)

GOLDEN_PATH = Path(__file__).parent / "fixtures" / "head" / "search-two-arm.golden.json"


def memory(path: str, *, title: str, claim: str, at: str, body: str | None = None) -> MemoryRecord:
    html = memory_html(
        content_hash=True,
        title=title,
        claim=claim,
        created=at,
        body=() if body is None else (body,),
    )
    return parse_record(path, html)


def rrf(weight: float, rank: int) -> float:
    return weight / (rank + RRF_K)


def axis(index: int, dimension: int = 4) -> np.ndarray:
    vector = np.zeros(dimension, dtype=np.float32)
    vector[index] = 1.0
    return vector


@pytest.fixture(scope="module")
def small() -> tuple[MapView, list[MemoryRecord]]:
    records = [
        memory(
            "areas/inbox/kafka-lag.html",
            title="Kafka consumer lag",
            claim="Consumer lag on the orders topic exceeded ten minutes.",
            body="Kafka partitions were rebalanced twice.",
            at="2026-03-01T00:00:00Z",
        ),
        memory(
            "areas/inbox/kafka-retention.html",
            title="Kafka retention",
            claim="The retention window for the orders topic is seven days.",
            at="2026-01-01T00:00:00Z",
        ),
        memory(
            "areas/inbox/postgres-vacuum.html",
            title="Postgres vacuum",
            claim="Autovacuum runs each evening on the ledger database.",
            at="2026-06-01T00:00:00Z",
        ),
        memory(
            "archive/2025/areas/inbox/kafka-old.html",
            title="Kafka old note",
            claim="The kafka cluster was on version two.",
            at="2026-09-01T00:00:00Z",
        ),
    ]
    return MapView(records, "sha"), records


def paths(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.path for hit in hits]


def test_tokenize_lowercases_splits_keeps_unicode_letters_and_drops_stop_words() -> None:
    assert tokenize("The Café's Orders-Topic is HOT") == ["café", "orders", "topic", "hot"]
    assert tokenize("") == []
    assert tokenize("the and of") == []
    assert tokenize("snake_case x２ ①") == ["snake_case", "x２", "①"]
    assert "the" in STOP_WORDS and "kafka" not in STOP_WORDS
    assert len(STOP_WORDS) == 57


def test_lexical_arm_alone_at_weight_one_and_k_60(small) -> None:  # type: ignore[no-untyped-def]
    view, _ = small
    hits = search_head(view, "kafka")
    assert paths(hits) == ["areas/inbox/kafka-lag.html", "areas/inbox/kafka-retention.html"]
    assert [hit.arms for hit in hits] == [("lexical",), ("lexical",)]
    assert hits[0].score == rrf(LEXICAL_WEIGHT, 1)
    assert hits[1].score == rrf(LEXICAL_WEIGHT, 2)
    assert hits[0].claim and hits[0].title == "Kafka consumer lag"


def test_each_distinct_query_token_counts_once(small) -> None:  # type: ignore[no-untyped-def]
    view, _ = small
    from headd.head.lexical import bm25_scores

    ids, once = bm25_scores(view_of_small(view).lexical, "kafka orders")
    ids_twice, twice = bm25_scores(view_of_small(view).lexical, "Kafka kafka orders KAFKA orders")
    assert ids.tolist() == ids_twice.tolist() and once.tolist() == twice.tolist()


def view_of_small(view: MapView):  # type: ignore[no-untyped-def]
    return version_from_records(view.records(), "small")


def test_recency_never_adds_a_record_no_arm_matched(small) -> None:  # type: ignore[no-untyped-def]
    view, _ = small
    assert "areas/inbox/postgres-vacuum.html" not in paths(search_head(view, "kafka"))
    assert search_head(view, "nothing matches here") == []
    assert search_head(view, "the") == []


def test_ranks_active_records_only(small) -> None:  # type: ignore[no-untyped-def]
    view, _ = small
    hits = search_head(view, "kafka cluster version")
    assert paths(hits) == ["areas/inbox/kafka-lag.html", "areas/inbox/kafka-retention.html"]


def test_orders_ties_by_path() -> None:
    records = [
        memory(
            f"areas/inbox/{name}.html",
            title="Same title",
            claim="Widgets are widgets.",
            at="2026-01-01T00:00:00Z",
        )
        for name in ("c", "a", "b")
    ]
    hits = search_head(MapView(records), "widgets")
    assert paths(hits) == ["areas/inbox/a.html", "areas/inbox/b.html", "areas/inbox/c.html"]
    assert len({hit.score for hit in hits}) == 1
    assert all("recency" in hit.arms for hit in hits)


@pytest.mark.parametrize(
    ("first", "second"), [("fact-10", "fact-9"), ("a", "z"), ("alpha", "zulu")]
)
def test_lexical_tie_breaks_on_path(first: str, second: str) -> None:
    records = [
        memory(
            f"areas/inbox/{name}.html",
            title="Quorum",
            claim="Quorum was lost twice.",
            at="2026-01-01T00:00:00Z",
        )
        for name in (second, first)
    ]
    hits = search_head(MapView(records), "quorum")
    assert paths(hits) == [f"areas/inbox/{first}.html", f"areas/inbox/{second}.html"]


def test_paths_order_as_utf16_code_units() -> None:
    # U+FF5E sorts before U+1F600 by code point but after it as UTF-16 (0xD83D...).
    records = [
        memory(
            f"areas/inbox/{name}.html",
            title="Quorum",
            claim="Quorum lost.",
            at="2026-01-01T00:00:00Z",
        )
        for name in ("\uff5e", "\U0001f600")
    ]
    hits = search_head(MapView(records), "quorum")
    assert paths(hits) == ["areas/inbox/\U0001f600.html", "areas/inbox/\uff5e.html"]


def test_honors_limit_and_answers_nothing_over_an_empty_view(small) -> None:  # type: ignore[no-untyped-def]
    view, _ = small
    assert len(search_head(view, "kafka", limit=1)) == 1
    assert search_head(view, "kafka", limit=0) == []
    assert search_head(MapView([]), "kafka") == []


def test_clamps_a_future_event_time_to_now() -> None:
    future = memory(
        "areas/inbox/z-future.html",
        title="Deploy window",
        claim="The deploy window is fixed.",
        at="2030-01-01T00:00:00Z",
    )
    recent = memory(
        "areas/inbox/recent.html",
        title="Deploy window",
        claim="The deploy window is fixed.",
        at="2026-09-22T00:00:00Z",
    )
    view = MapView([future, recent])

    def order(now: str | None = None) -> list[str]:
        return paths(search_head(view, "deploy", now=now))

    assert order() == ["areas/inbox/z-future.html", "areas/inbox/recent.html"]
    assert order("2026-09-23T00:00:00Z") == ["areas/inbox/z-future.html", "areas/inbox/recent.html"]
    assert order("2026-09-21T00:00:00Z") == ["areas/inbox/recent.html", "areas/inbox/z-future.html"]


def _twins() -> tuple[MemoryRecord, MemoryRecord, list[MemoryRecord]]:
    older = memory(
        "areas/inbox/a-older.html",
        title="Quorum loss",
        claim="Quorum was lost twice.",
        at="2026-01-01T00:00:00Z",
    )
    newer = memory(
        "areas/inbox/b-newer.html",
        title="Quorum loss",
        claim="Quorum was lost twice.",
        at="2026-09-01T00:00:00Z",
    )
    fillers = [
        memory(
            f"areas/inbox/filler-{index}.html",
            title=f"Filler {index}",
            claim=f"Quorum filler number {index} carries more words than the twins do.",
            at=f"2026-0{index + 2}-01T00:00:00Z",
        )
        for index in range(6)
    ]
    return older, newer, fillers


def test_a_newer_twin_wins_an_exact_tie() -> None:
    older, newer, fillers = _twins()
    for records in ([older, newer], [older, newer, *fillers]):
        hits = search_head(MapView(records), "quorum loss")
        assert paths(hits[:2]) == [newer.path, older.path]
        assert hits[0].score == hits[1].score
        assert hits[0].arms == ("lexical", "recency")
    assert older.content_hash == newer.content_hash
    hits = search_head(
        MapView([older, newer, *fillers]),
        "quorum loss",
        vectors={older.content_hash: axis(0)},
        query_vector=axis(0),
    )
    assert paths(hits[:2]) == [newer.path, older.path]
    assert hits[0].arms == ("lexical", "recency", "vector")


def test_a_clearly_better_older_match_is_not_overtaken_by_newer_weaker_ones() -> None:
    better = memory(
        "areas/inbox/a-better.html",
        title="Quorum loss",
        claim="Quorum was lost twice; quorum returned after the quorum vote.",
        at="2025-01-01T00:00:00Z",
    )
    weaker = [
        memory(
            f"areas/inbox/b-weaker-{index}.html",
            title=f"Quorum note {index}",
            claim=f"Quorum was mentioned once in note {index}.",
            at=f"2026-0{index + 3}-01T00:00:00Z",
        )
        for index in range(6)
    ]
    for records in ([better, weaker[-1]], [better, *weaker]):
        hits = search_head(MapView(records), "quorum loss")
        assert hits[0].path == better.path
        assert hits[0].arms == ("lexical",)


def _zircons() -> list[MemoryRecord]:
    return [
        memory(
            f"areas/inbox/z-{index:02d}.html",
            title="Mineral note",
            claim="Zircon is a mineral.",
            body=None if index == 0 else " ".join(["filler"] * index),
            at="2026-01-01T00:00:00Z",
        )
        for index in range(LEXICAL_ARM_LIMIT + 5)
    ]


def test_the_lexical_arm_keeps_its_best_40() -> None:
    records = _zircons()
    hits = search_head(MapView(records), "zircon", limit=len(records))
    in_arm = [hit.path for hit in hits if "lexical" in hit.arms]
    assert in_arm == [record.path for record in records[:LEXICAL_ARM_LIMIT]]
    assert len(hits) == LEXICAL_ARM_LIMIT == 40


def test_a_tie_run_crossing_the_lexical_cap_keeps_the_first_40_by_path() -> None:
    records = [
        memory(
            f"areas/inbox/t-{index:02d}.html",
            title="Basalt note",
            claim="Basalt is volcanic.",
            at="2026-01-01T00:00:00Z",
        )
        for index in range(LEXICAL_ARM_LIMIT + 5)
    ]
    hits = search_head(MapView(list(reversed(records))), "basalt", limit=len(records))
    assert paths(hits) == [record.path for record in records[:LEXICAL_ARM_LIMIT]]


def test_reads_an_overlay_built_here() -> None:
    records = [parse_record(f.path, f.html) for f in map(memory_for, (0, 1, 2))]
    overlay = with_overlay(
        MapView(records), [Put(path="areas/inbox/new.html", html=memory_for(99).html)]
    )
    hits = search_head(overlay, "Country99")
    assert hits[0].path == "areas/inbox/new.html"
    assert "lexical" in hits[0].arms


# ------------------------------------------------------------------------------------------------
# The golden


@pytest.fixture(scope="module")
def golden() -> list[dict]:  # type: ignore[type-arg]
    entries = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))
    assert len(entries) == 8
    return entries


@pytest.fixture(scope="module")
def golden_records() -> list[MemoryRecord]:
    return [parse_record(f.path, f.html) for f in map(memory_for, range(120))]


def golden_inputs(entry: dict) -> dict:  # type: ignore[type-arg]
    if entry["query"] == "Country11 (default limit, no now)":
        return {"query": "Country11"}
    return {"query": entry["query"], "limit": 25, "now": "2026-09-01T00:00:00Z"}


def assert_golden(hits: list, expected: list[dict]) -> None:  # type: ignore[type-arg]
    assert [hit.path for hit in hits] == [row["path"] for row in expected]
    assert [list(hit.arms) for hit in hits] == [row["arms"] for row in expected]
    assert [hit.claim for hit in hits] == [row["claim"] for row in expected]
    for hit, row in zip(hits, expected, strict=True):
        assert math.isclose(hit.score, row["score"], rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize("built", ["map-view", "version"])
def test_golden_reproduced_exactly(golden, golden_records, built: str) -> None:  # type: ignore[no-untyped-def]
    view = (
        MapView(golden_records, "golden")
        if built == "map-view"
        else version_from_records(golden_records, "golden")
    )
    for entry in golden:
        inputs = golden_inputs(entry)
        query = inputs.pop("query")
        assert_golden(search_head(view, query, **inputs), entry["hits"])


def test_vectors_without_a_query_vector_or_the_reverse_is_the_lexical_answer(
    golden, golden_records
) -> None:  # type: ignore[no-untyped-def]
    view = version_from_records(golden_records, "golden")
    vectors = {record.content_hash: axis(0) for record in golden_records}
    for entry in golden:
        inputs = golden_inputs(entry)
        query = inputs.pop("query")
        assert_golden(search_head(view, query, vectors=vectors, **inputs), entry["hits"])
        assert_golden(search_head(view, query, query_vector=axis(0), **inputs), entry["hits"])


@pytest.fixture(scope="module")
def golden_version(golden_records):  # type: ignore[no-untyped-def]
    return version_from_records(golden_records, "golden")


@settings(max_examples=60, deadline=None)
@given(query=st.text(max_size=40), limit=st.integers(min_value=0, max_value=30))
def test_a_vector_arm_covering_no_record_changes_nothing(
    golden_version, query: str, limit: int
) -> None:  # type: ignore[no-untyped-def]
    plain = search_head(golden_version, query, limit=limit)
    assert (
        search_head(golden_version, query, limit=limit, vectors={}, query_vector=axis(1)) == plain
    )


# ------------------------------------------------------------------------------------------------
# With vectors


def test_a_record_with_no_word_in_common_is_found_through_the_vector_arm(small) -> None:  # type: ignore[no-untyped-def]
    view, records = small
    lag, retention, vacuum, _ = records
    vectors = {
        lag.content_hash: axis(0),
        retention.content_hash: axis(1),
        vacuum.content_hash: axis(2),
    }
    hits = {
        hit.path: hit for hit in search_head(view, "kafka", vectors=vectors, query_vector=axis(2))
    }
    found = hits["areas/inbox/postgres-vacuum.html"]
    assert found.arms == ("vector",)
    assert found.score == rrf(VECTOR_WEIGHT, 1)
    assert hits[lag.path].arms == ("lexical", "vector")
    assert hits[lag.path].score == rrf(LEXICAL_WEIGHT, 1) + rrf(VECTOR_WEIGHT, 2)
    assert hits[retention.path].score == rrf(LEXICAL_WEIGHT, 2) + rrf(VECTOR_WEIGHT, 2)


def test_a_lexical_hit_and_a_vector_only_hit_tying_at_one_instant_rank_in_path_order() -> None:
    lexical_only = memory(
        "areas/inbox/z-lexical.html",
        title="Granite",
        claim="Granite is igneous.",
        at="2026-05-01T00:00:00Z",
    )
    vector_only = memory(
        "areas/inbox/a-vector.html",
        title="Pumice",
        claim="Pumice floats on water.",
        at="2026-05-01T00:00:00Z",
    )
    hits = search_head(
        MapView([lexical_only, vector_only]),
        "granite",
        vectors={vector_only.content_hash: axis(0)},
        query_vector=axis(0),
    )
    assert paths(hits) == [vector_only.path, lexical_only.path]
    assert hits[0].score == hits[1].score
    assert [hit.arms for hit in hits] == [("recency", "vector"), ("lexical", "recency")]


def test_a_record_without_a_vector_is_not_in_the_vector_arm(small) -> None:  # type: ignore[no-untyped-def]
    view, records = small
    hits = search_head(
        view, "nothing", vectors={records[0].content_hash: axis(0)}, query_vector=axis(0)
    )
    assert [hit.path for hit in hits if "vector" in hit.arms] == ["areas/inbox/kafka-lag.html"]


def test_the_vector_arm_ranks_active_records_only(small) -> None:  # type: ignore[no-untyped-def]
    view, records = small
    archived, lag = records[3], records[0]
    hits = search_head(
        view,
        "nothing",
        vectors={archived.content_hash: axis(3), lag.content_hash: axis(0)},
        query_vector=axis(3),
    )
    assert archived.path not in paths(hits)
    assert next(hit for hit in hits if hit.path == lag.path).arms == ("vector",)


def _widgets() -> tuple[list[MemoryRecord], dict[str, np.ndarray]]:
    count = VECTOR_ARM_LIMIT + 5
    records = [
        memory(
            f"areas/inbox/r-{index:02d}.html",
            title=f"Record {index}",
            claim=f"Widget {index} is blue.",
            at="2026-01-01T00:00:00Z",
        )
        for index in range(count)
    ]
    vectors = {}
    for index, record in enumerate(records):
        angle = (index / count) * (math.pi / 2)
        vectors[record.content_hash] = np.array(
            [math.cos(angle), math.sin(angle)], dtype=np.float32
        )
    return records, vectors


def test_the_vector_arm_keeps_its_best_40() -> None:
    records, vectors = _widgets()
    hits = search_head(
        MapView(records),
        "zzz",
        limit=len(records),
        vectors=vectors,
        query_vector=np.array([1.0, 0.0]),
    )
    in_arm = [hit.path for hit in hits if "vector" in hit.arms]
    assert len(in_arm) == VECTOR_ARM_LIMIT == 40
    assert set(in_arm) == {record.path for record in records[:VECTOR_ARM_LIMIT]}


def test_admit_narrows_the_lexical_arm_before_its_cap() -> None:
    records = _zircons()
    odd = [record.path for index, record in enumerate(records) if index % 2 == 1]
    admitted = set(odd)
    hits = search_head(
        MapView(records), "zircon", limit=len(records), admit=lambda r: r.path in admitted
    )
    assert paths(hits) == odd
    assert all("lexical" in hit.arms for hit in hits)


def test_admit_narrows_the_vector_arm_before_its_cap() -> None:
    records, vectors = _widgets()
    refused = {record.path for record in records[:10]}
    hits = search_head(
        MapView(records),
        "zzz",
        limit=len(records),
        vectors=vectors,
        query_vector=np.array([1.0, 0.0]),
        admit=lambda record: record.path not in refused,
    )
    in_arm = {hit.path for hit in hits if "vector" in hit.arms}
    assert in_arm == {record.path for record in records[10:]}
    assert not any(hit.path in refused for hit in hits)


def test_bm25_statistics_stay_those_of_all_active_records_under_admit(small) -> None:  # type: ignore[no-untyped-def]
    view, records = small
    # Admitting one record changes which records rank, not the score BM25 gives the one kept:
    # with two kafka documents ranked, lag is first either way, at rank 1.
    only_retention = search_head(view, "kafka", admit=lambda r: r.path == records[1].path)
    assert paths(only_retention) == [records[1].path]
    assert only_retention[0].score == rrf(LEXICAL_WEIGHT, 1)


def test_a_hit_is_a_frozen_value() -> None:
    record = memory(
        "areas/inbox/x.html", title="Xenon", claim="Xenon is inert.", at="2026-01-01T00:00:00Z"
    )
    hit = search_head(MapView([record]), "xenon")[0]
    with pytest.raises(AttributeError):
        hit.score = 1.0  # type: ignore[misc]
    assert msgspec.json.decode(msgspec.json.encode(hit))["arms"] == ["lexical"]
