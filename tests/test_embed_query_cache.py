"""The query-vector LRU: one model call per distinct query while it stays cached."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from headd.embed.query_cache import QueryVectorCache
from headd.errors import ModelUnavailable


class CountingEmbedder:
    """Deterministic fake at the embedder port: a vector from the text's bytes, calls counted."""

    space = "counting@4"

    def __init__(self, fail: bool = False, rows: int | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail
        self.rows = rows
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls.append(list(texts))
        if self.fail:
            raise ModelUnavailable("down", {"reason": "test"})
        n = len(texts) if self.rows is None else self.rows
        out = np.zeros((n, 4), dtype=np.float32)
        for i, text in enumerate(list(texts)[:n]):
            out[i, : min(4, len(text))] = [ord(c) for c in text[:4]]
            out[i, 3] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_second_lookup_is_a_hit_without_a_model_call() -> None:
    fake = CountingEmbedder()
    cache = QueryVectorCache(fake, capacity=4)
    first = cache.vector_for("alpha")
    second = cache.vector_for("alpha")
    assert fake.calls == [["alpha"]]
    np.testing.assert_array_equal(first, second)
    assert first.shape == (4,)
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.size) == (1, 1, 1)
    assert cache.space == "counting@4"


def test_least_recently_used_goes_first() -> None:
    fake = CountingEmbedder()
    cache = QueryVectorCache(fake, capacity=2)
    cache.vector_for("a")
    cache.vector_for("b")
    cache.vector_for("a")  # a is now the most recent
    cache.vector_for("c")  # evicts b, not a
    cache.vector_for("a")
    assert len(fake.calls) == 3
    cache.vector_for("b")
    assert fake.calls[-1] == ["b"]
    assert cache.stats().size == 2


def test_exact_text_is_the_key() -> None:
    fake = CountingEmbedder()
    cache = QueryVectorCache(fake)
    cache.vector_for("Alpha")
    cache.vector_for("alpha")
    cache.vector_for("alpha ")
    assert len(fake.calls) == 3


def test_vectors_handed_out_are_read_only() -> None:
    cache = QueryVectorCache(CountingEmbedder())
    vector = cache.vector_for("q")
    with pytest.raises(ValueError):
        vector[0] = 9.0


def test_failures_pass_through_and_are_not_cached() -> None:
    fake = CountingEmbedder(fail=True)
    cache = QueryVectorCache(fake)
    for _ in range(2):
        with pytest.raises(ModelUnavailable):
            cache.vector_for("q")
    assert len(fake.calls) == 2
    assert cache.stats().size == 0


def test_wrong_number_of_vectors_is_model_unavailable() -> None:
    cache = QueryVectorCache(CountingEmbedder(rows=0))
    with pytest.raises(ModelUnavailable):
        cache.vector_for("q")


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        QueryVectorCache(CountingEmbedder(), capacity=0)


def test_concurrent_lookups_agree_and_stay_bounded() -> None:
    fake = CountingEmbedder()
    cache = QueryVectorCache(fake, capacity=8)
    results: dict[int, list[np.ndarray]] = {}

    def worker(k: int) -> None:
        results[k] = [cache.vector_for(f"q{i % 12}") for i in range(60)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reference = QueryVectorCache(CountingEmbedder(), capacity=64)
    for vectors in results.values():
        for i, v in enumerate(vectors):
            np.testing.assert_array_equal(v, reference.vector_for(f"q{i % 12}"))
    assert cache.stats().size <= 8
    stats = cache.stats()
    assert stats.hits + stats.misses == 240


class KeyedEmbedder(CountingEmbedder):
    """An embedder whose vectors ignore case and spacing, and that says so with ``query_key``."""

    def query_key(self, text: str) -> str:
        return " ".join(text.lower().split())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed([self.query_key(t) for t in texts])


def test_the_embedders_query_key_is_the_key() -> None:
    fake = KeyedEmbedder()
    cache = QueryVectorCache(fake)
    first = cache.vector_for("Alpha  Beta")
    np.testing.assert_array_equal(cache.vector_for("alpha beta"), first)
    assert len(fake.calls) == 1
    assert cache.stats().size == 1


def test_peek_answers_hits_and_never_calls_the_model() -> None:
    fake = CountingEmbedder()
    cache = QueryVectorCache(fake)
    assert cache.peek("q") is None
    assert fake.calls == []
    vector = cache.vector_for("q")
    assert cache.peek("q") is vector
    assert len(fake.calls) == 1
    stats = cache.stats()
    assert (stats.hits, stats.misses) == (1, 1)
