"""Vectors: the text rule, the fill (memhtml's packages/head/tests/vectors.test.ts, ported over the
deterministic hashing embedder), the persisted cache, and the cache-backed vector arm."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np
import pytest
from support.head_corpus import MapView
from support.memory import memory_html

from headd.embed.hashing import HashingEmbedder
from headd.embed.port import DocumentEmbedder
from headd.errors import EmbedModelMismatch, ModelUnavailable
from headd.head.search import search_head
from headd.head.vectors import (
    VECTOR_TEXT_MAX_CHARS,
    VectorCache,
    VectorSpace,
    fill_vectors,
    title_key_of,
    title_text_of,
    vector_keys_of,
    vector_text_of,
)
from headd.head.version import parse_record, version_from_records
from headd.record import MemoryRecord, deflate_text

EMBEDDER = HashingEmbedder(dimension=64)
SPACE = VectorSpace.parse(EMBEDDER.space)


def memory(
    path: str, claim: str, *, body: str | None = None, title: str | None = None
) -> MemoryRecord:
    html = memory_html(
        content_hash=True,
        title=title or f"About {path}",
        claim=claim,
        created="2026-01-01T00:00:00Z",
        body=() if body is None else (body,),
    )
    return parse_record(path, html)


class Recording:
    """A recording embedder over the hashing one: every batch it was sent, in order."""

    def __init__(self, inner: DocumentEmbedder = EMBEDDER) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []

    @property
    def space(self) -> str:
        return self.inner.space

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def test_the_hashing_embedder_is_a_deterministic_document_embedder() -> None:
    assert isinstance(EMBEDDER, DocumentEmbedder)
    first = EMBEDDER.embed(["quorum was lost", ""])
    again = HashingEmbedder(dimension=64).embed(["quorum was lost"])
    assert first.shape == (2, 64) and first.dtype == np.float32
    assert np.array_equal(first[0], again[0])
    assert abs(float(np.linalg.norm(first[0])) - 1.0) < 1e-6 and not first[1].any()
    near, far = EMBEDDER.embed(["quorum was lost twice", "basalt is volcanic rock"])
    assert float(first[0] @ near) > float(first[0] @ far)


def test_vector_text_is_the_article_and_leaves_the_title_out() -> None:
    record = memory(
        "areas/inbox/a.html",
        "Quorum was lost twice.",
        title="A title not in the article",
        body="The second loss followed a network partition.",
    )
    text = vector_text_of(record)
    assert text.startswith("Quorum was lost twice.") and "network partition" in text
    assert "A title not in the article" not in text
    assert text == record.body_text.strip()


def test_vector_text_cuts_a_long_article_keeping_its_opening() -> None:
    record = memory("areas/inbox/long.html", "The claim comes first.", body="word " * 1000)
    assert len(record.body_text) > VECTOR_TEXT_MAX_CHARS == 1800
    text = vector_text_of(record)
    assert len(text) == VECTOR_TEXT_MAX_CHARS and text.startswith("The claim comes first.")
    astral = msgspec.structs.replace(record, body_deflated=deflate_text("\U0001f600" * 1000))
    assert len(vector_text_of(astral)) == 900  # 1,800 UTF-16 code units


def test_one_article_under_two_titles_has_one_text() -> None:
    first = memory("areas/inbox/one.html", "Same fact.", title="One")
    second = memory("areas/inbox/two.html", "Same fact.", title="Two")
    assert first.content_hash == second.content_hash and vector_text_of(first) == vector_text_of(
        second
    )


def test_fill_embeds_every_active_record_once_in_one_call() -> None:
    records = [
        memory("areas/inbox/a.html", "Alpha is first."),
        memory("areas/inbox/b.html", "Beta is second."),
    ]
    embedder = Recording()
    filled = fill_vectors(MapView(records), VectorCache.empty(SPACE), embedder)
    assert msgspec.structs.asdict(filled.counts) == {
        "records": 2,
        "reused": 0,
        "embedded": 4,  # two articles, two titles
        "empty": 0,
    }
    assert len(embedder.batches) == 1 and filled.remaining == 0
    for record in records:
        for key, text in (
            (record.content_hash, vector_text_of(record)),
            (title_key_of(record.title), record.title),
        ):
            vector = EMBEDDER.embed([text])[0]
            # the cache holds the unit row in half precision
            held = filled.cache.get(key)
            assert held is not None and held.dtype == np.float32
            np.testing.assert_allclose(held, vector / np.linalg.norm(vector), atol=5e-4)
        assert filled.cache.covers(record)
    assert filled.cache.space == SPACE


def test_fill_embeds_only_what_the_cache_lacks_and_keeps_what_it_held() -> None:
    first, second = (
        memory("areas/inbox/a.html", "Alpha is first."),
        memory("areas/inbox/b.html", "Beta is second."),
    )
    once = fill_vectors(MapView([first]), VectorCache.empty(SPACE), Recording())
    embedder = Recording()
    twice = fill_vectors(MapView([second]), once.cache, embedder)
    assert embedder.batches == [[vector_text_of(second), title_text_of(second)]]
    assert set(twice.cache.hashes()) == {*vector_keys_of(first), *vector_keys_of(second)}
    again = Recording()
    thrice = fill_vectors(MapView([first, second]), twice.cache, again)
    assert again.batches == [] and thrice.counts.reused == 2 and thrice.cache is twice.cache


def test_fill_embeds_active_records_only_and_one_text_per_content_hash() -> None:
    active = memory("areas/inbox/a.html", "Alpha is first.")
    archived = memory("archive/2026/areas/inbox/old.html", "Old news is old.")
    twin = memory("projects/x/two.html", "Alpha is first.", title="Two")
    embedder = Recording()
    filled = fill_vectors(MapView([active, archived, twin]), VectorCache.empty(SPACE), embedder)
    assert embedder.batches == [[vector_text_of(active), title_text_of(active), "Two"]]
    assert msgspec.structs.asdict(filled.counts) == {
        "records": 2,
        "reused": 0,
        "embedded": 3,  # one article, two titles
        "empty": 0,
    }
    assert archived.content_hash not in filled.cache and len(filled.cache) == 3


def test_an_empty_article_is_counted_and_never_sent() -> None:
    real = memory("areas/inbox/a.html", "Alpha is first.")
    blank = msgspec.structs.replace(
        real,
        path="areas/inbox/blank.html",
        body_deflated=deflate_text("  "),
        content_hash="sha256:blank",
    )
    embedder = Recording()
    filled = fill_vectors(MapView([real, blank]), VectorCache.empty(SPACE), embedder)
    assert embedder.batches == [[vector_text_of(real), title_text_of(real)]]
    assert filled.counts.empty == 1


def test_a_limit_bounds_one_call_and_counts_the_rest_as_remaining() -> None:
    records = [memory(f"areas/inbox/{n}.html", f"{n.title()} is here.") for n in ("a", "b", "c")]
    embedder = Recording()
    first = fill_vectors(MapView(records), VectorCache.empty(SPACE), embedder, limit=3)
    assert (
        [len(b) for b in embedder.batches] == [3]  # texts, not records: a's two and b's article
        and first.counts.embedded == 3
        and first.remaining == 3
    )
    assert [first.cache.covers(r) for r in records] == [True, False, False]
    second = fill_vectors(MapView(records), first.cache, embedder, limit=3)
    assert [len(b) for b in embedder.batches] == [3, 3] and second.remaining == 0
    assert second.counts.reused == 1
    assert all(second.cache.covers(r) for r in records)
    none = Recording()
    assert (
        fill_vectors(MapView([]), VectorCache.empty(SPACE), none).counts.records == 0
        and none.batches == []
    )


class Broken:
    def __init__(self, rows: int | None = None, width: int = SPACE.dim) -> None:
        self.rows, self.width = rows, width

    @property
    def space(self) -> str:
        return SPACE.id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros(
            (len(texts) if self.rows is None else self.rows, self.width), dtype=np.float32
        )


def test_a_wrong_answer_ends_the_fill_with_nothing_stored() -> None:
    record = memory("areas/inbox/a.html", "Alpha is first.")
    cache = VectorCache.empty(SPACE)
    with pytest.raises(EmbedModelMismatch, match="dimensions"):
        fill_vectors(MapView([record]), cache, Broken(width=SPACE.dim - 1))
    with pytest.raises(ModelUnavailable):
        fill_vectors(MapView([record]), cache, Broken(rows=3))
    assert len(cache) == 0
    with pytest.raises(EmbedModelMismatch):
        fill_vectors(MapView([record]), cache, HashingEmbedder(dimension=32))


def test_the_cache_backed_vector_arm_ranks_as_a_plain_mapping_does() -> None:
    records = [
        memory(f"areas/inbox/r{i}.html", f"Widget {i} is blue and part {i % 3}.") for i in range(30)
    ]
    view = version_from_records(records, "v")
    cache = fill_vectors(view, VectorCache.empty(SPACE), EMBEDDER).cache
    plain = {h: cache.get(h) for h in cache.hashes()}
    query = EMBEDDER.embed(["widget part 2"])[0]
    from_cache = search_head(view, "blue widget", limit=30, vectors=cache, query_vector=query)
    from_dict = search_head(view, "blue widget", limit=30, vectors=plain, query_vector=query)
    assert [h.path for h in from_cache] == [h.path for h in from_dict]
    assert [h.arms for h in from_cache] == [h.arms for h in from_dict]
    for a, b in zip(from_cache, from_dict, strict=True):
        # the hybrid score carries the cosine: float32 products against float64 ones
        assert abs(a.score - b.score) < 1e-6
    assert any("vector" in h.arms for h in from_cache)
