"""The per-version matrix: moved by changed rows only, and ranking exactly as the cache does.

Views are real versions built from parsed records (``version_from_records``); the embedder is the
deterministic hashing one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.embed.hashing import HashingEmbedder
from headd.head import vectors as vectors_module
from headd.head.search import search_head
from headd.head.vectors import VectorCache, VectorSpace, VersionMatrix, fill_vectors
from headd.head.version import parse_record, version_from_records
from headd.record import MemoryRecord

EMBEDDER = HashingEmbedder(dimension=32)
SPACE = VectorSpace.parse(EMBEDDER.space)
WORDS = ["blue", "widget", "red", "part", "engine", "order", "postgres", "queue"]


def memory(
    path: str, claim: str, title: str = "About it", tags: tuple[str, ...] = ()
) -> MemoryRecord:
    html = memory_html(
        content_hash=True, title=title, claim=claim, created="2026-01-01T00:00:00Z", tags=tags
    )
    return parse_record(path, html)


def claim_of(seed: int) -> str:
    words = [WORDS[(seed * 7 + k * 3) % len(WORDS)] for k in range(4)]
    return f"The {' '.join(words)} note {seed}."


def same_hits(view: object, matrix: VersionMatrix, cache: VectorCache, query: str) -> None:
    vector = EMBEDDER.embed([query])[0]
    plain = search_head(view, query, limit=50, vectors=cache, query_vector=vector)  # type: ignore[arg-type]
    fast = search_head(view, query, limit=50, vectors=matrix, query_vector=vector)  # type: ignore[arg-type]
    assert [h.path for h in fast] == [h.path for h in plain]
    assert [h.arms for h in fast] == [h.arms for h in plain]
    for a, b in zip(fast, plain, strict=True):
        assert abs(a.score - b.score) < 1e-12


def test_a_head_only_edit_touches_no_row_and_a_move_touches_two() -> None:
    records = {f"areas/a/r{i}.html": memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(20)}
    view = version_from_records(list(records.values()), "v1")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    assert matrix.coverage == 1.0

    records["areas/a/r3.html"] = memory("areas/a/r3.html", claim_of(3), tags=("retagged",))
    edited = version_from_records(list(records.values()), "v2")
    assert edited.record("areas/a/r3.html").blob_sha != view.record("areas/a/r3.html").blob_sha  # type: ignore[union-attr]
    assert fill_vectors(edited, cache, EMBEDDER).counts.embedded == 0
    assert matrix.move_to(edited, cache) == 0, "same article, same title: no row rewritten"

    records["areas/a/r3.html"] = memory("areas/a/r3.html", claim_of(3), title="A new title")
    retitled = version_from_records(list(records.values()), "v2b")
    titled = fill_vectors(retitled, cache, EMBEDDER)
    assert titled.counts.embedded == 1, "a new title embeds the title alone, not the article"
    cache = titled.cache
    assert matrix.move_to(retitled, cache) == 1

    moved = records.pop("areas/a/r4.html")
    records["areas/b/r4.html"] = memory("areas/b/r4.html", moved.claim)
    after_move = version_from_records(list(records.values()), "v3")
    filled = fill_vectors(after_move, cache, EMBEDDER)
    assert filled.counts.embedded == 0, "a move keeps the vector (same content hash)"
    assert matrix.move_to(after_move, filled.cache) == 2  # one row freed, one placed
    same_hits(after_move, matrix, cache, "blue widget part")


def test_rows_without_a_vector_are_masked_until_the_cache_has_one() -> None:
    records = [memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(10)]
    view = version_from_records(records, "v1")
    # five texts: four articles and the title they share, embedded once
    partial = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER, limit=5).cache
    matrix = VersionMatrix.build(view, partial)
    assert matrix.coverage == 0.4
    same_hits(view, matrix, partial, "engine order")
    full = fill_vectors(view, partial, EMBEDDER).cache
    assert matrix.move_to(view, full) == 6
    assert matrix.coverage == 1.0
    same_hits(view, matrix, full, "engine order")


operation = st.tuples(st.sampled_from(["add", "drop", "edit", "title", "move"]), st.integers(0, 40))


@settings(max_examples=25, deadline=None)
@given(st.lists(operation, min_size=1, max_size=12), st.integers(0, 8))
def test_a_moved_matrix_ranks_as_a_fresh_one_and_as_the_cache(
    operations: list[tuple[str, int]], fill_limit: int
) -> None:
    """Invariant: after any sequence of versions, the moved matrix answers exactly as the cache
    path (and as a matrix built fresh for that version)."""
    records = {f"areas/a/r{i}.html": memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(8)}
    view = version_from_records(list(records.values()), "v0")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    for step, (kind, seed) in enumerate(operations, start=1):
        paths = sorted(records)
        if kind == "add" or not paths:
            path = f"areas/n/r{seed}-{step}.html"
            records[path] = memory(path, claim_of(seed + step))
        else:
            path = paths[seed % len(paths)]
            if kind == "drop":
                del records[path]
            elif kind == "edit":
                records[path] = memory(path, claim_of(seed * 3 + step))
            elif kind == "title":
                records[path] = memory(path, records[path].claim, title=f"T{step}")
            else:
                old = records.pop(path)
                new_path = f"areas/m/r{seed}-{step}.html"
                records[new_path] = memory(new_path, old.claim)
        view = version_from_records(list(records.values()), f"v{step}")
        cache = fill_vectors(view, cache, EMBEDDER, limit=fill_limit).cache
        matrix.move_to(view, cache)
        fresh = VersionMatrix.build(view, cache)
        assert matrix.coverage == fresh.coverage
        for query in ("blue widget", "postgres queue order"):
            same_hits(view, matrix, cache, query)
            same_hits(view, fresh, cache, query)


def test_a_zero_query_scores_every_row_zero_and_ties_break_by_path() -> None:
    records = [memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(5)]
    view = version_from_records(records, "v1")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    ranked = matrix.ranked(np.zeros(SPACE.dim, dtype=np.float32), None, 3)
    assert {score for score, _, _ in ranked} == {0.0}
    assert len(ranked) == 5, "the run of equal scores that fills the cap is finished"


def test_an_article_edit_rewrites_that_row_only() -> None:
    records = {f"areas/a/r{i}.html": memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(12)}
    view = version_from_records(list(records.values()), "v1")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    records["areas/a/r5.html"] = memory("areas/a/r5.html", "Postgres queue engine order.")
    edited = version_from_records(list(records.values()), "v2")
    cache = fill_vectors(edited, cache, EMBEDDER).cache
    assert matrix.move_to(edited, cache) == 1
    same_hits(edited, matrix, cache, "postgres queue engine order")


def test_the_sorted_window_ranks_as_a_full_sort_with_ties_and_refusals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 8 words make few distinct claims, so many rows tie; a window of 3 cuts inside tie runs,
    # and an admit that refuses most rows forces the fall back to the full sort.
    records = [memory(f"areas/a/r{i:03d}.html", claim_of(i % 9)) for i in range(60)]
    view = version_from_records(records, "v1")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    admits = [None, lambda r: r.path.endswith(("7.html", "3.html")), lambda r: False]
    for query in ("blue widget", "postgres queue order", "engine"):
        vector = EMBEDDER.embed([query])[0]
        for admit in admits:
            for limit in (1, 5, 40):
                monkeypatch.setattr(vectors_module, "VECTOR_WINDOW", 10_000)
                full = matrix.ranked(vector, admit, limit)
                monkeypatch.setattr(vectors_module, "VECTOR_WINDOW", 3)
                assert matrix.ranked(vector, admit, limit) == full


def test_a_fill_after_an_advance_keeps_every_held_row_and_every_answer() -> None:
    """A fill appends rows: the vectors already held, and so the answers over a version they
    cover, stay bit for bit (through the cache and through the moved matrix)."""
    records = {f"areas/a/r{i}.html": memory(f"areas/a/r{i}.html", claim_of(i)) for i in range(12)}
    view = version_from_records(list(records.values()), "v1")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    matrix = VersionMatrix.build(view, cache)
    query = EMBEDDER.embed(["blue widget part"])[0]
    before_cache = search_head(view, "blue", limit=50, vectors=cache, query_vector=query)  # type: ignore[arg-type]
    before_matrix = search_head(view, "blue", limit=50, vectors=matrix, query_vector=query)  # type: ignore[arg-type]
    held = {key: cache.get(key) for key in cache.hashes()}

    records["areas/n/new.html"] = memory("areas/n/new.html", "Queue engine.", title="Fresh")
    advanced = version_from_records(list(records.values()), "v2")
    filled = fill_vectors(advanced, cache, EMBEDDER)
    assert filled.counts.embedded == 2 and filled.cache is not cache
    for key, vector in held.items():
        assert np.array_equal(filled.cache.get(key), vector)  # type: ignore[arg-type]
    assert matrix.move_to(advanced, filled.cache) == 1
    assert matrix.move_to(view, filled.cache) == 1  # and back: the new record's row freed
    after_cache = search_head(view, "blue", limit=50, vectors=filled.cache, query_vector=query)  # type: ignore[arg-type]
    after_matrix = search_head(view, "blue", limit=50, vectors=matrix, query_vector=query)  # type: ignore[arg-type]
    assert after_cache == before_cache
    assert after_matrix == before_matrix
