"""Query vectors remembered by query text, least recently used first out.

Why: search itself never embeds, so the caller embeds the query first, and an agent
repeats queries (retries, paging, the same recall each turn, the same words in another case or
spacing). One model call costs tens of
milliseconds on two cores; a dict look-up costs nothing. Documents never go through here: their
vectors are keyed by content hash in the vector cache.

The key is the embedder's ``query_key(text)`` when it has one (the local model's: the words its
tokenizer sees, so ``"What is X?"`` and ``"what is  x ?"`` share one entry, since they embed
alike), else the exact text. The cache belongs to one embedder, hence one vector space; a new
space needs a new cache. The vectors it hands out are read-only views, so no caller can corrupt
what the next caller gets.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from headd.embed.port import DocumentEmbedder
from headd.errors import ModelUnavailable
from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = LazyModule("numpy", globals(), "np")

DEFAULT_CAPACITY = 1024


@dataclass(frozen=True)
class QueryCacheStats:
    size: int
    capacity: int
    hits: int
    misses: int


class QueryVectorCache:
    """``vector_for(query)``: the embedder's vector for that exact text, computed at most once
    while it stays among the ``capacity`` most recently used.

    Thread-safe. Two threads missing on the same text at once may both embed it (the model call
    runs outside the lock so a slow call never blocks hits); both get equal vectors.
    """

    def __init__(self, embedder: DocumentEmbedder, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.embedder = embedder
        self.capacity = capacity
        key: Callable[[str], Hashable] | None = getattr(embedder, "query_key", None)
        self._key: Callable[[str], Hashable] = key if callable(key) else _exact
        self._entries: OrderedDict[Hashable, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def space(self) -> str:
        return self.embedder.space

    def key(self, query: str) -> Hashable:
        """What the cache files ``query`` under: equal keys get one vector."""
        return self._key(query)

    def peek(self, query: str) -> npt.NDArray[np.float32] | None:
        """The cached vector (counted as a hit), or None without calling the model: cheap enough
        for an event loop, so a repeated query skips the hop to a worker thread."""
        return self._lookup(self._key(query), count_miss=False)

    def vector_for(self, query: str) -> npt.NDArray[np.float32]:
        """The query's unit vector (1-D, read-only); ModelUnavailable passes through uncached."""
        key = self._key(query)
        hit = self._lookup(key, count_miss=True)
        if hit is not None:
            return hit
        vectors = self.embedder.embed([query])
        if vectors.ndim != 2 or vectors.shape[0] != 1:
            raise ModelUnavailable(
                "embedder answered the wrong number of vectors for one query",
                {"space": self.embedder.space, "shape": list(vectors.shape)},
            )
        vector = np.array(vectors[0], dtype=np.float32)
        vector.setflags(write=False)
        with self._lock:
            self._entries[key] = vector
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return vector

    def _lookup(self, key: Hashable, *, count_miss: bool) -> npt.NDArray[np.float32] | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self._hits += 1
            elif count_miss:
                self._misses += 1
            return hit

    def stats(self) -> QueryCacheStats:
        with self._lock:
            return QueryCacheStats(len(self._entries), self.capacity, self._hits, self._misses)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _exact(query: str) -> str:
    return query
