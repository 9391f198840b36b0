"""search_head's hybrid default: score-aware fusion, caps that grow with the limit, and question
words left to the vector arm. Views are parsed records; vectors come from the deterministic
hashing embedder or are built by hand."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.head_corpus import MapView
from support.memory import memory_html

from headd.embed.hashing import HashingEmbedder
from headd.head.scope import Scope
from headd.head.search import (
    HYBRID,
    LEXICAL_ARM_LIMIT,
    LEXICAL_SHARE,
    QUESTION_WORDS,
    SEED_EXACT,
    hybrid_lexical_arm,
    lexical_query_of,
    search_head,
)
from headd.head.vectors import (
    TITLE_WEIGHT,
    VectorCache,
    VectorSpace,
    fill_vectors,
    title_key_of,
    vector_of_record,
)
from headd.head.version import parse_record, version_from_records
from headd.record import MemoryRecord

EMBEDDER = HashingEmbedder(dimension=32)
SPACE = VectorSpace.parse(EMBEDDER.space)
WORDS = ["basalt", "zircon", "quartz", "mica", "garnet", "olivine", "feldspar", "pyrite"]
TIMES = ["2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z"]


def memory(path: str, claim: str, *, title: str = "Note", at: str = TIMES[0]) -> MemoryRecord:
    return parse_record(
        path, memory_html(content_hash=True, title=title, claim=claim, created=at, updated=at)
    )


def paths(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.path for hit in hits]


corpus = st.lists(
    st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.sampled_from(TIMES)),
    min_size=1,
    max_size=30,
)
query = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


def records_of(rows: list[tuple[list[str], str]]) -> list[MemoryRecord]:
    return [
        memory(f"areas/a/r{i:02d}.html", " ".join(words) + ".", at=at)
        for i, (words, at) in enumerate(rows)
    ]


@settings(max_examples=60, deadline=None)
@given(corpus, query, st.integers(1, 50), st.sampled_from(["same", "zero-query"]))
def test_an_uninformative_vector_arm_leaves_the_lexical_order_as_it_is(
    rows: list[tuple[list[str], str]], text: str, limit: int, how: str
) -> None:
    """Invariant: cosines that tell no record apart (every vector the same, or a zero query)
    change nothing: the hybrid answer is the lexical arm's, path for path."""
    records = records_of(rows)
    view = MapView(records)
    same = np.ones(SPACE.dim, dtype=np.float32)
    vectors = {record.content_hash: same for record in records}
    query_vector = np.zeros(SPACE.dim) if how == "zero-query" else EMBEDDER.embed([text])[0]
    lexical = search_head(view, text, limit=limit, now=TIMES[-1])
    hybrid = search_head(
        view, text, limit=limit, now=TIMES[-1], vectors=vectors, query_vector=query_vector
    )
    assert paths(hybrid) == paths(lexical)
    assert all(hit.arms[0] == "lexical" for hit in hybrid)


@settings(max_examples=60, deadline=None)
@given(corpus, st.lists(st.sampled_from([*WORDS, "what", "how"]), min_size=1, max_size=4))
def test_without_vectors_the_default_limit_answers_as_the_seed(
    rows: list[tuple[list[str], str]], words: list[str]
) -> None:
    view = MapView(records_of(rows))
    text = " ".join(words)
    for limit in (1, 10, LEXICAL_ARM_LIMIT):
        assert search_head(view, text, limit=limit, now=TIMES[-1]) == search_head(
            view, text, limit=limit, now=TIMES[-1], mode=SEED_EXACT
        )


def _zircons(count: int) -> list[MemoryRecord]:
    return [
        memory(f"areas/z/z-{i:03d}.html", "zircon " * (1 + i % 7) + f"crystal {i}.")
        for i in range(count)
    ]


def test_a_limit_above_40_is_answered_in_full_with_one_arm() -> None:
    view = MapView(_zircons(70))
    assert len(search_head(view, "zircon", limit=60)) == 60
    assert len(search_head(view, "zircon", limit=500)) == 70
    assert len(search_head(view, "zircon", limit=60, mode=SEED_EXACT)) == LEXICAL_ARM_LIMIT


def test_with_two_arms_each_arm_keeps_as_many_as_the_limit() -> None:
    records = _zircons(120)
    view = version_from_records(records, "v")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    query_vector = EMBEDDER.embed(["zircon crystal"])[0]
    hits = search_head(view, "zircon", limit=100, vectors=cache, query_vector=query_vector)
    assert len(hits) == 100
    assert sum("lexical" in hit.arms for hit in hits) == 100
    assert sum("vector" in hit.arms for hit in hits) > LEXICAL_ARM_LIMIT
    seed = search_head(
        view, "zircon", limit=100, vectors=cache, query_vector=query_vector, mode=SEED_EXACT
    )
    assert sum("lexical" in hit.arms for hit in seed) == LEXICAL_ARM_LIMIT
    assert sum("vector" in hit.arms for hit in seed) == LEXICAL_ARM_LIMIT


def test_each_arm_adds_at_most_its_share_and_the_best_of_both_scores_one() -> None:
    records = [
        memory("areas/a/both.html", "Quartz veins cross the basalt."),
        memory("areas/a/lexical.html", "Quartz quartz quartz, nothing else."),
        memory("areas/a/vector.html", "Feldspar only."),
        memory("areas/a/neither.html", "Pyrite."),
    ]
    axis = {r.path: i for i, r in enumerate(records)}
    vectors = {}
    for record in records:
        vector = np.zeros(4, dtype=np.float32)
        vector[axis[record.path]] = 1.0
        vectors[record.content_hash] = vector
    query_vector = np.array([1.0, 0.0, 0.9, 0.0])  # both and vector best, then neither, lexical
    hits = search_head(MapView(records), "quartz", vectors=vectors, query_vector=query_vector)
    by_path = {hit.path: hit for hit in hits}
    assert set(by_path) == {"areas/a/both.html", "areas/a/lexical.html", "areas/a/vector.html"}
    assert all(0.0 < hit.score <= 1.0 for hit in hits)
    # ``vector.html`` has no lexical share, ``lexical.html`` a lexical share alone
    assert by_path["areas/a/vector.html"].score <= 1.0 - LEXICAL_SHARE + 1e-12
    assert by_path["areas/a/lexical.html"].score <= LEXICAL_SHARE + 1e-12
    assert by_path["areas/a/vector.html"].arms == ("vector",)


def test_a_record_found_by_both_arms_outranks_one_found_by_either() -> None:
    records = _zircons(30)
    target = records[3]
    vectors = {r.content_hash: EMBEDDER.embed([f"other {r.path}"])[0] for r in records}
    vectors[target.content_hash] = EMBEDDER.embed(["zircon crystal target"])[0]
    query_vector = EMBEDDER.embed(["zircon crystal target"])[0]
    lexical = search_head(MapView(records), "zircon", limit=30)
    assert paths(lexical).index(target.path) > 0
    hybrid = search_head(MapView(records), "zircon", vectors=vectors, query_vector=query_vector)
    assert hybrid[0].path == target.path and hybrid[0].arms == ("lexical", "vector")


def test_question_words_are_left_to_the_vector_arm() -> None:
    assert lexical_query_of("What did Caroline paint, and where?") == "caroline paint"
    assert lexical_query_of("what how") == "what how", "a query of question words alone stays"
    assert {"what", "how", "where", "why"} <= QUESTION_WORDS
    records = [
        memory("areas/a/asks.html", "What a day, what a week, what a month."),
        memory("areas/a/answers.html", "Caroline painted a sunrise by the lake."),
    ]
    vectors = {r.content_hash: EMBEDDER.embed([r.claim])[0] for r in records}
    question = "What did Caroline paint?"
    hybrid = search_head(
        MapView(records), question, vectors=vectors, query_vector=EMBEDDER.embed(["x"])[0]
    )
    assert hybrid[0].path == "areas/a/answers.html"
    assert paths(search_head(MapView(records), question, mode=SEED_EXACT))[0] == (
        "areas/a/asks.html"
    ), "the seed scores every token, question words too"


def test_a_records_vector_adds_its_titles_when_the_lookup_has_one() -> None:
    record = memory("areas/a/r.html", "Basalt is volcanic.", title="Caroline, 8 May 2023")
    article, title = EMBEDDER.embed(["Basalt is volcanic.", "Caroline, 8 May 2023"])
    assert np.array_equal(vector_of_record({record.content_hash: article}, record), article)  # type: ignore[arg-type]
    both = vector_of_record(
        {record.content_hash: article, title_key_of(record.title): title},
        record,  # type: ignore[arg-type]
    )
    assert both is not None and np.allclose(both, article + TITLE_WEIGHT * title)
    view = version_from_records([record], "v")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    assert cache.covers(record) and np.allclose(cache.vector_of(record), both)  # type: ignore[arg-type]


def test_an_unknown_mode_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="mode"):
        search_head(MapView([]), "x", mode="fuzzy")
    assert search_head(MapView([]), "x", mode=HYBRID) == []


@settings(max_examples=60, deadline=None)
@given(
    corpus,
    query,
    st.integers(1, 50),
    st.sampled_from([HYBRID, SEED_EXACT]),
    st.booleans(),
    st.booleans(),
)
def test_explain_splits_each_hits_score_by_the_arms_that_found_it(
    rows: list[tuple[list[str], str]],
    text: str,
    limit: int,
    mode: str,
    with_vectors: bool,
    scoped: bool,
) -> None:
    """Invariant: asked to explain, the search answers the same hits, and each hit's parts are
    the arms that found it (recency aside), summing to its score."""
    records = records_of(rows)
    view = version_from_records(records, "v")
    extra: dict[str, object] = {"admit": Scope()} if scoped else {}
    if with_vectors:
        cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
        extra = {"vectors": cache, "query_vector": EMBEDDER.embed([text])[0]}
    plain = search_head(view, text, limit=limit, now=TIMES[-1], mode=mode, **extra)
    why: dict[str, dict[str, float]] = {}
    hits = search_head(view, text, limit=limit, now=TIMES[-1], mode=mode, explain=why, **extra)
    assert hits == plain
    assert set(why) == set(paths(hits))
    for hit in hits:
        assert set(why[hit.path]) <= {arm for arm in hit.arms if arm != "recency"}
        assert abs(sum(why[hit.path].values()) - hit.score) <= 1e-9 * max(1.0, hit.score)


@settings(max_examples=60, deadline=None)
@given(
    corpus,
    st.lists(st.sampled_from([*WORDS, "what", "how"]), min_size=1, max_size=4).map(" ".join),
    st.integers(1, 50),
    st.sampled_from([HYBRID, SEED_EXACT]),
    st.booleans(),
    st.sampled_from([None, Scope(), Scope(include_archived=True)]),
)
def test_a_lexical_arm_ranked_ahead_answers_as_the_search_ranks_it(
    rows: list[tuple[list[str], str]],
    text: str,
    limit: int,
    mode: str,
    with_vectors: bool,
    scope: Scope | None,
) -> None:
    """Invariant: the arm the daemon ranks while the query embeds (``hybrid_lexical_arm``)
    gives the very answer the search gives ranking it itself; where the search does not run
    hybrid with vectors, the arm handed in is not used."""
    records = records_of(rows)
    # every third record archived, so a scope that reaches the archive ranks other candidates
    records = [
        memory(f"archive/2026/a/r{i:02d}.html", r.claim) if i % 3 == 2 else r
        for i, r in enumerate(records)
    ]
    view = version_from_records(records, "v")
    extra: dict[str, object] = {} if scope is None else {"admit": scope}
    if with_vectors:
        cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
        extra |= {"vectors": cache, "query_vector": EMBEDDER.embed([text])[0]}
    ahead = hybrid_lexical_arm(view, text, limit=limit, admit=scope)
    plain = search_head(view, text, limit=limit, now=TIMES[-1], mode=mode, **extra)
    given_arm = search_head(
        view, text, limit=limit, now=TIMES[-1], mode=mode, hybrid_lexical=ahead, **extra
    )
    assert given_arm == plain


def test_an_arm_ranked_ahead_reaches_the_archive_when_the_scope_does() -> None:
    records = [memory(f"areas/a/r{i}.html", "basalt zircon.") for i in range(3)]
    records.append(memory("archive/2026/a/r9.html", "basalt garnet."))
    view = version_from_records(records, "v")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    scope = Scope(include_archived=True)
    extra: dict[str, object] = {"admit": scope, "vectors": cache}
    extra["query_vector"] = EMBEDDER.embed(["garnet"])[0]
    ahead = hybrid_lexical_arm(view, "garnet", limit=10, admit=scope)
    hits = search_head(view, "garnet", now=TIMES[-1], hybrid_lexical=ahead, **extra)
    assert paths(hits) == ["archive/2026/a/r9.html"]
    assert hits == search_head(view, "garnet", now=TIMES[-1], **extra)
