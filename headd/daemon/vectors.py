"""The vector arm as the daemon runs it: one embedder, a cache persisted in index.db, a fill.

Searches never wait for vectors: after a load or an advance the daemon
schedules a fill on its embed thread (``fill_vectors`` embeds only the content hashes the cache
lacks, one batch at a time), and a search uses whatever cache is held right now. The arm runs
only once the cache covers ``MIN_COVERAGE`` of the version's active records, because a
half-filled cache would rank records with a vector above equally good ones without; until then
the answer says ``degraded: true``. Every answer carries the coverage it saw.

Persistence (``docs/design/vectors.md``): each batch's new vectors are appended to
``head_vectors`` in ``<store>/.memhtml/headd/index.db`` through the plane's one writer thread
(``headd_plane.head_vectors``), keyed by content hash within one space, so a restart, a move or
a head-only edit costs no embedding and two spaces never mix.

The search side keeps one :class:`headd.head.vectors.VersionMatrix` for the followed version:
an advance or a fill updates the rows that changed, so a search is one matrix-vector product.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from headd.embed.run_signal import signalling
from headd.errors import HeaddError, ModelUnavailable
from headd.lazy_import import LazyModule
from headd.wire.answers import VectorFillStatus, VectorsFillAnswer, VectorsStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from headd.daemon.plane_service import PlaneService
    from headd.embed.port import DocumentEmbedder
    from headd.embed.query_cache import QueryVectorCache
    from headd.head.indexes import IndexedView
    from headd.head.vectors import FillResult, VectorCache, VectorSpace, VersionMatrix
else:
    np = LazyModule("numpy", globals(), "np")

log = logging.getLogger(__name__)

MIN_COVERAGE = 0.95
FILL_BATCH = 64


class VectorPersistence(Protocol):
    """Where vectors outlive the process (blocking calls, made off the event loop)."""

    def load(self, space: VectorSpace) -> VectorCache: ...

    def append(self, space: VectorSpace, hashes: Sequence[str], vectors: npt.ArrayLike) -> None: ...


class PlaneVectorStore:
    """``head_vectors`` in index.db: reads on a private read-only connection, writes through
    the plane service's one writer thread (``PlaneService.submit``, waited for on the calling
    thread), or through a writer of its own when there is no plane service (a test, a tool)."""

    def __init__(self, store: Path, plane: PlaneService | None = None) -> None:
        from headd_plane.paths import index_path_of

        self.index_path = index_path_of(store)
        self._plane = plane
        self._own_writer: Any = None
        self._lock = threading.Lock()

    def load(self, space: VectorSpace) -> VectorCache:
        from headd_plane.head_vectors import load_cache

        return load_cache(self.index_path, space)

    def append(self, space: VectorSpace, hashes: Sequence[str], vectors: npt.ArrayLike) -> None:
        from headd_plane.head_vectors import append_vectors, rows_of

        rows_of(space, hashes, vectors)  # refuse a wrong width before touching the writer
        if self._plane is not None:
            self._plane.submit(lambda p: append_vectors(p.db, space, hashes, vectors)).result()
            return
        with self._lock:
            if self._own_writer is None:
                from headd_plane.db import open_writer

                self._own_writer = open_writer(self.index_path)
            append_vectors(self._own_writer, space, hashes, vectors)

    def close(self) -> None:
        if self._own_writer is not None:
            self._own_writer.close()
            self._own_writer = None


@dataclass(frozen=True, slots=True)
class SearchVectors:
    """What ``search_head`` gets (both or neither) and the coverage the answer reports."""

    vectors: VersionMatrix | None
    query_vector: npt.NDArray[np.float32] | None
    coverage: float = 0.0

    @property
    def ran(self) -> bool:
        return self.vectors is not None and self.query_vector is not None


NO_VECTORS = SearchVectors(None, None)


@dataclass
class FillProgress:
    """What ``status`` says about the background fill."""

    filling: bool = False
    embedded: int = 0
    remaining: int | None = None
    rate_per_s: float | None = None
    started: float | None = None
    batches: int = 0
    persisted: int = 0
    last_error: str | None = None
    last_error_code: str | None = None


class VectorService:
    """The embedder (or None), the held cache, coverage per version, and the fill loop."""

    def __init__(
        self,
        store: Path,
        embedder: DocumentEmbedder | None,
        executor: Executor,
        *,
        persistence: VectorPersistence | None = None,
        notify: Callable[[str], object] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self._executor = executor
        self.persistence: VectorPersistence = persistence or PlaneVectorStore(store)
        self.notify = notify
        self._monotonic = monotonic
        self.cache: VectorCache | None = None
        self._queries: QueryVectorCache | None = None
        #: Query embeddings running, by cache key: a query asked again meanwhile waits for the
        #: same model call instead of starting a second one.
        self._embedding: dict[Hashable, asyncio.Future[npt.NDArray[np.float32]]] = {}
        #: Each running embedding's event, set once its model call has begun.
        self._started: dict[Hashable, threading.Event] = {}
        self._coverage: tuple[IndexedView, VectorCache, float] | None = None
        self._matrix: VersionMatrix | None = None
        self._tip: IndexedView | None = None
        self._wanted: IndexedView | None = None
        self._filling: asyncio.Task[None] | None = None
        self._warmed = False
        self.progress = FillProgress()
        self._stopping = False

    @property
    def space(self) -> str | None:
        return None if self.embedder is None else str(self.embedder.space)

    @property
    def last_error(self) -> str | None:
        return self.progress.last_error

    def load_blocking(self) -> None:
        """Read the persisted cache of the embedder's space (at start, before serving)."""
        if self.embedder is None:
            return
        from headd.embed.query_cache import QueryVectorCache
        from headd.head.vectors import VectorSpace

        space = VectorSpace.parse(self.embedder.space)
        started = time.perf_counter()
        self.cache = self.persistence.load(space)
        self._queries = QueryVectorCache(self.embedder)
        log.info(
            "vector cache %s: %d vectors (%.0f ms)",
            space.id,
            len(self.cache),
            (time.perf_counter() - started) * 1000.0,
        )

    # -- coverage and search ----------------------------------------------------------------

    def coverage(self, view: IndexedView) -> float:
        """Share of the version's active records whose vector the cache holds whole (memoized)."""
        cache = self.cache
        if cache is None:
            return 0.0
        memo = self._coverage
        if memo is not None and memo[0] is view and memo[1] is cache:
            return memo[2]
        matrix = self._matrix
        if matrix is not None and matrix.view is view and matrix.cache is cache:
            value = matrix.coverage
        else:
            from headd.head.indexes import indexes_of

            active = indexes_of(view).active
            covered = sum(1 for r in active if cache.covers(r))
            value = 1.0 if not active else covered / len(active)
        self._coverage = (view, cache, value)  # holds both, so identity cannot be recycled
        return value

    @property
    def held_matrix(self) -> VersionMatrix | None:
        """The followed version's matrix, if one was built (``status.memory`` counts it)."""
        return self._matrix

    def matrix_for(self, view: IndexedView, cache: VectorCache) -> VersionMatrix:
        """The version's matrix. The followed tip's (the last view a fill was scheduled for) is
        kept and moved by changed rows only; any other view (``at``, a session) gets one of its
        own that is not kept."""
        from headd.head.vectors import VersionMatrix

        if view is not self._tip:
            return VersionMatrix.build(view, cache)
        held = self._matrix
        if held is None:
            self._matrix = held = VersionMatrix.build(view, cache)
        elif held.view is not view or held.cache is not cache:
            held.move_to(view, cache)
        return held

    async def for_search(self, view: IndexedView, query: str, wanted: bool) -> SearchVectors:
        if self.cache is None or self._queries is None:
            return NO_VECTORS
        coverage = self.coverage(view)
        if not wanted or coverage < MIN_COVERAGE:
            return SearchVectors(None, None, coverage)
        # A query seen before answers on the loop; only an unseen one hops to a worker thread, where
        # the model runs without the GIL, so the loop keeps serving (lexical searches included).
        vector = self._queries.peek(query)
        if vector is None:
            try:
                vector = await asyncio.shield(self._embed_query(self._queries, query))
            except Exception as exc:  # a model failure degrades the search, never fails it
                log.warning("query embed failed: %s", exc)
                return SearchVectors(None, None, coverage)
        cache = self.cache
        dim = cache.space.dim
        if getattr(vector, "ndim", 0) != 1 or vector.shape[0] != dim:
            log.warning("query vector of shape %s for %s", getattr(vector, "shape", None), dim)
            return SearchVectors(None, None, coverage)
        return SearchVectors(self.matrix_for(view, cache), vector, coverage)

    def begin(self, view: IndexedView, query: str) -> threading.Event | None:
        """Start embedding ``query`` for a hybrid search of ``view`` when the search will need
        the model (no cached vector, enough coverage), and answer the event set once the model
        call has begun (:mod:`headd.embed.run_signal`); None when no model call is needed.
        :meth:`for_search` then joins the same call."""
        queries = self._queries
        if self.cache is None or queries is None or self.coverage(view) < MIN_COVERAGE:
            return None
        if queries.peek(query) is not None:
            return None
        self._embed_query(queries, query)
        return self._started.get(queries.key(query))

    def _embed_query(
        self, queries: QueryVectorCache, query: str
    ) -> asyncio.Future[npt.NDArray[np.float32]]:
        key = queries.key(query)
        running = self._embedding.get(key)
        if running is None:
            started = threading.Event()

            def embed() -> npt.NDArray[np.float32]:
                with signalling(started):
                    return queries.vector_for(query)

            running = asyncio.get_running_loop().run_in_executor(None, embed)
            self._embedding[key] = running
            self._started[key] = started

            def finished(done: asyncio.Future[npt.NDArray[np.float32]]) -> None:
                self._embedding.pop(key, None)
                self._started.pop(key, None)
                if not done.cancelled():
                    done.exception()  # retrieved: a waiter that went away leaves no warning

            running.add_done_callback(finished)
        return running

    def status(self, view: IndexedView) -> VectorsStatus:
        """``status.vectors`` (docs/protocol.md, ``status``)."""
        return VectorsStatus(
            space=self.space,
            entries=0 if self.cache is None else len(self.cache),
            coverage=round(self.coverage(view), 4),
        )

    def fill_status(self) -> VectorFillStatus:
        """``status.vector_fill``: the background fill's progress."""
        p = self.progress
        return VectorFillStatus(
            filling=p.filling,
            batches=p.batches,
            persisted=p.persisted,
            fill_remaining=p.remaining,
            fill_embedded=p.embedded,
            fill_rate_per_s=None if p.rate_per_s is None else round(p.rate_per_s, 1),
            last_error=p.last_error,
            last_error_code=p.last_error_code,
        )

    # -- filling ----------------------------------------------------------------------------

    def _warm(self) -> None:
        """Load the model now (off the request path) so the first query does not pay for it."""
        load = getattr(self.embedder, "load", None)
        if callable(load):
            try:
                load()
            except Exception as exc:
                log.warning("loading the embedder failed: %s", exc)
        self._warmed = True

    def _fill_batch(self, view: IndexedView, limit: int) -> FillResult:
        """One batch on the embed thread: embed, persist the new rows, then swap the cache in."""
        from headd.head.vectors import fill_vectors

        embedder, cache = self.embedder, self.cache
        assert embedder is not None and cache is not None  # fills start only once both are
        result = fill_vectors(view, cache, embedder, limit=limit)
        if result.filled and result.vectors is not None:
            try:
                self.persistence.append(result.cache.space, result.filled, result.vectors)
                self.progress.persisted += len(result.filled)
            except HeaddError as exc:  # kept in memory; the next start re-embeds them
                log.warning("persisting %d vectors failed: %s", len(result.filled), exc.code)
            self.cache = result.cache
        return result

    async def fill_now(self, view: IndexedView, limit: int | None) -> VectorsFillAnswer:
        """``vectors.fill``: embed up to ``limit`` of what the cache lacks, now."""
        if self.embedder is None or self.cache is None:
            raise ModelUnavailable("this daemon runs without an embedder", {"embedder": None})
        loop = asyncio.get_running_loop()
        embedded = 0
        reused: int | None = None
        empty = 0
        remaining = 0
        while True:
            step = FILL_BATCH if limit is None else min(FILL_BATCH, limit - embedded)
            result = await loop.run_in_executor(
                self._executor, self._fill_batch, view, max(0, step)
            )
            if reused is None:
                reused, empty = result.counts.reused, result.counts.empty
            embedded += result.counts.embedded
            remaining = result.remaining
            if remaining == 0 or result.counts.embedded == 0 or self._stopping:
                break
        return VectorsFillAnswer(
            space=self.space,
            embedded=embedded,
            reused=reused or 0,
            empty=empty,
            remaining=remaining,
            coverage=round(self.coverage(view), 4),
        )

    def schedule_fill(self, view: IndexedView) -> None:
        """Fill for ``view`` soon; a fill already running picks up the newest view after it."""
        self._tip = view
        if self.embedder is None or self.cache is None or self._stopping:
            return
        self._wanted = view
        if self._filling is None or self._filling.done():
            self._filling = asyncio.get_running_loop().create_task(self._fill_loop())

    async def _fill_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if not self._warmed:
            await loop.run_in_executor(self._executor, self._warm)
        while self._wanted is not None and not self._stopping:
            view, self._wanted = self._wanted, None
            await self._fill_view(loop, view)

    async def _fill_view(self, loop: asyncio.AbstractEventLoop, view: IndexedView) -> None:
        p = self.progress
        p.filling, p.embedded, p.started = True, 0, self._monotonic()
        try:
            while not self._stopping and self._wanted is None:
                result = await loop.run_in_executor(
                    self._executor, self._fill_batch, view, FILL_BATCH
                )
                p.batches += 1
                p.embedded += result.counts.embedded
                p.remaining = result.remaining
                elapsed = self._monotonic() - p.started
                if p.embedded and elapsed > 0:
                    p.rate_per_s = p.embedded / elapsed
                if result.counts.embedded:
                    self._say(view)
                if result.remaining == 0 or not result.counts.embedded:
                    break
            p.last_error = p.last_error_code = None
        except HeaddError as exc:
            p.last_error, p.last_error_code = exc.message, exc.code
            log.warning("vector fill failed: %s: %s", exc.code, exc.message)
        except Exception as exc:  # a broken model must not take the daemon down
            p.last_error, p.last_error_code = type(exc).__name__, None
            log.warning("vector fill failed: %s", exc)
        finally:
            p.filling = False
            if self._wanted is None:
                self._say(view, done=True)

    def _say(self, view: IndexedView, done: bool = False) -> None:
        p = self.progress
        text = (
            f"vectors {self.coverage(view):.1%} of {self.space}"
            + ("" if done else f", {p.remaining} to embed")
            + ("" if p.rate_per_s is None else f" ({p.rate_per_s:.1f}/s)")
        )
        if self.notify is not None:
            try:
                self.notify(text)
            except Exception:
                log.exception("status notification failed")
        log.info("%s", text)

    def stop(self) -> None:
        """Ask a running fill to stop after its current batch (its rows are already stored)."""
        self._stopping = True
        self._wanted = None

    async def wait_idle(self) -> None:
        if self._filling is not None:
            await asyncio.gather(self._filling, return_exceptions=True)


__all__ = [
    "MIN_COVERAGE",
    "NO_VECTORS",
    "PlaneVectorStore",
    "SearchVectors",
    "VectorService",
]
