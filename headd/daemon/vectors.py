"""The vector arm as the daemon runs it: one embedder, one persisted cache, a background fill.

Searches never wait for vectors (contract section 1): after a load or an advance the daemon
schedules a fill on a worker thread (``fill_vectors`` embeds only the content hashes the cache
lacks, then the cache is saved atomically), and a search uses whatever cache is held right now.
The arm runs only once the cache covers ``MIN_COVERAGE`` of the version's active records, because
a half-filled cache would rank records with a vector above equally good ones without; until then
the answer says ``degraded: true``. Query vectors come from a small LRU (agents repeat queries).

Where: ``<store>/.memhtml/headd/vectors/<model id>@<dim>.npz`` (characters outside
``[A-Za-z0-9._@-]`` become ``_``), so a change of embedder is a different file, never a mixed one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MIN_COVERAGE = 0.95
FILL_BATCH = 256
SAVE_EVERY_S = 30.0
VECTORS_DIR = Path(".memhtml") / "headd" / "vectors"
_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]")


def cache_path(store: Path, space_id: str) -> Path:
    return store / VECTORS_DIR / (_UNSAFE.sub("_", space_id) + ".npz")


@dataclass(frozen=True, slots=True)
class SearchVectors:
    """What ``search_head`` gets: both or neither."""

    vectors: Any
    query_vector: Any

    @property
    def ran(self) -> bool:
        return self.vectors is not None and self.query_vector is not None


NO_VECTORS = SearchVectors(None, None)


class VectorService:
    """The embedder (or None), the held cache, coverage per version, and the fill loop."""

    def __init__(self, store: Path, embedder: Any | None, executor: Executor) -> None:
        self.store = store
        self.embedder = embedder
        self._executor = executor
        self.cache: Any = None
        self.path: Path | None = None
        self._queries: Any = None
        self._coverage: tuple[Any, Any, float] | None = None
        self._wanted: Any = None
        self._filling: asyncio.Task[None] | None = None
        self.fills = 0
        self.last_error: str | None = None
        self._stopping = False

    @property
    def space(self) -> str | None:
        return None if self.embedder is None else str(self.embedder.space)

    def load_blocking(self) -> None:
        """Read the persisted cache of the embedder's space (at start, before serving)."""
        if self.embedder is None:
            return
        from headd.embed.query_cache import QueryVectorCache
        from headd.head import VectorCache, VectorSpace

        space = VectorSpace.parse(self.embedder.space)
        self.path = cache_path(self.store, space.id)
        self.cache = VectorCache.load(self.path, space)
        self._queries = QueryVectorCache(self.embedder)
        log.info("vector cache %s: %d vectors", space.id, len(self.cache))

    # -- coverage and search ----------------------------------------------------------------

    def coverage(self, view: Any) -> float:
        """Share of the version's active records whose content hash has a vector (memoized)."""
        cache = self.cache
        if cache is None:
            return 0.0
        memo = self._coverage
        if memo is not None and memo[0] is view and memo[1] is cache:
            return memo[2]
        active = [r.content_hash for r in view.records() if not r.archived]
        covered = sum(1 for h in active if h in cache)
        value = 1.0 if not active else covered / len(active)
        self._coverage = (view, cache, value)  # holds both, so identity cannot be recycled
        return value

    async def for_search(self, view: Any, query: str, wanted: bool) -> SearchVectors:
        if not wanted or self.cache is None or self._queries is None:
            return NO_VECTORS
        if self.coverage(view) < MIN_COVERAGE:
            return NO_VECTORS
        loop = asyncio.get_running_loop()
        try:
            vector = await loop.run_in_executor(None, self._queries.vector_for, query)
        except Exception as exc:  # a model failure degrades the search, never fails it
            log.warning("query embed failed: %s", exc)
            return NO_VECTORS
        return SearchVectors(self.cache, vector)

    def status(self, view: Any) -> dict[str, Any]:
        return {
            "space": self.space,
            "entries": 0 if self.cache is None else len(self.cache),
            "coverage": round(self.coverage(view), 4),
        }

    # -- the background fill ----------------------------------------------------------------

    def schedule_fill(self, view: Any) -> None:
        """Fill for ``view`` soon; a fill already running picks up the newest view after it."""
        if self.embedder is None or self.cache is None:
            return
        self._wanted = view
        if self._filling is None or self._filling.done():
            self._filling = asyncio.get_running_loop().create_task(self._fill_loop())

    async def _fill_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while self._wanted is not None:
            view, self._wanted = self._wanted, None
            try:
                await loop.run_in_executor(self._executor, self._fill_blocking(view))
            except Exception as exc:
                self.last_error = str(exc)
                log.warning("vector fill failed: %s", exc)

    def _fill_blocking(self, view: Any) -> Callable[[], None]:
        """Fill in batches of ``FILL_BATCH`` so a stop waits for one batch, not the whole fill;
        the cache is swapped in after every batch (searches see coverage grow) and saved at the
        end, at a stop, and at least every ``SAVE_EVERY_S``."""

        def fill() -> None:
            from headd.head import fill_vectors

            embedder = self.embedder
            assert embedder is not None and self.path is not None
            unsaved = 0
            last_save = time.monotonic()
            while not self._stopping:
                result = fill_vectors(view, self.cache, embedder, limit=FILL_BATCH)
                if result.counts.embedded:
                    self.cache = result.cache
                    unsaved += result.counts.embedded
                    log.info(
                        "embedded %d records into %s (%d to go)",
                        result.counts.embedded,
                        self.space,
                        result.remaining,
                    )
                if unsaved and (
                    result.remaining == 0
                    or self._stopping
                    or time.monotonic() - last_save > SAVE_EVERY_S
                ):
                    self.cache.save(self.path)
                    self.fills += 1
                    unsaved = 0
                    last_save = time.monotonic()
                if result.remaining == 0 or not result.counts.embedded:
                    break
            if unsaved:
                self.cache.save(self.path)

        return fill

    def stop(self) -> None:
        """Ask a running fill to stop after its current batch (it saves what it has)."""
        self._stopping = True
        self._wanted = None

    async def wait_idle(self) -> None:
        if self._filling is not None:
            await asyncio.gather(self._filling, return_exceptions=True)
