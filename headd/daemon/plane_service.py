"""The daemon's SQLite plane: one writer thread, read-only readers, a coalescing background update.

SQLite work never runs on the event loop. Everything that writes ``index.db`` or ``state.db``
(index rebuild/update, reinforce, trace scans, state import/export, session links) runs on ONE
dedicated thread that owns the store's one writer connection (``headd_plane.open_plane``), so
writes are serialised without any lock of ours and a slow rebuild can never interleave with a
reinforce. Queries (plane search, recall, trace search/show) run on a small pool whose threads
each hold their own read-only connection: WAL lets them read while the writer writes.

After the load and after every advance the daemon asks for ``update``; it starts once the
advances pause (``UPDATE_QUIET_S``, at most ``UPDATE_MAX_WAIT_S`` late), and requests arriving
while one waits or runs are coalesced into it or a single follow-up run, so a burst of commits
costs one or two updates. Failures are logged and kept for ``status``; they never stop the daemon.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from headd_plane import calls as plane_calls
from headd_plane.answer import Context, PlaneRequest, answer, is_read

from headd.errors import HeaddError, ShuttingDown, StorageFailure
from headd.memory_trim import release_free_memory
from headd.wire.answers import IndexUpdateAnswer, IndexUpdates, PlaneAnswer
from headd.wire.browse import StateUsageAnswer, TracesLinksAnswer
from headd.wire.doctor import StatePruneAnswer
from headd.wire.methods import IndexRebuild

if TYPE_CHECKING:
    from headd_plane.db import PlaneDb
    from headd_plane.plane import Plane
    from headd_plane.recall import RankedPool
    from headd_plane.retrieval import Retrieval

    from headd.embed.port import DocumentEmbedder

log = logging.getLogger(__name__)

T = TypeVar("T")

READER_THREADS = 2

#: The background update starts once advances have paused this long. An update holds the GIL
#: (its first one scans the whole work tree; later ones ask git only about the paths inotify saw
#: touched), so an update per commit in a burst of commits
#: would make each next call of the burst wait for it; after a pause, one update covers them all.
UPDATE_QUIET_S = 0.15
#: ... and no later than this after it was first asked for, so a steady stream of commits still
#: sees index.db follow.
UPDATE_MAX_WAIT_S = 1.0
#: How long a recall waits for the index to reach the branch tip before it answers from the index
#: as it is (folding in the head's ranking at the tip): recall reads its own writes, and a
#: slow first build on a large store still answers within this bound.
CATCH_UP_S = 3.0


class UpdateStopped(ShuttingDown):
    """Raised from the indexer's hook points once the daemon is stopping: the transaction in
    progress rolls back (or, between batches, the watermark is simply not recorded), exactly
    what a crash at that point leaves, which the plane is built to resume from."""


@dataclass
class UpdateStats:
    """What ``status`` says about the background update."""

    runs: int = 0
    last_ms: float | None = None
    last_sha: str | None = None
    last_error: str | None = None
    last_error_code: str | None = None


class PlaneService:
    """The plane as the daemon holds it (one per store)."""

    update_quiet_s: float = UPDATE_QUIET_S
    update_max_wait_s: float = UPDATE_MAX_WAIT_S
    #: Whether updates learn the dirty work tree from inotify (off: a status scan per update).
    watches_work_tree: bool = True
    _asked_at: float = 0.0

    def __init__(
        self,
        store: Path,
        embedder: DocumentEmbedder | None,
        trace_root: Path,
        *,
        open_plane: Callable[..., Plane] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.trace_root = trace_root
        self._open_plane = open_plane
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="headd-plane-write")
        self._readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="headd-plane-read")
        self._plane: Plane | None = None
        self._local = threading.local()
        self._reader_dbs: list[PlaneDb] = []
        self._reader_lock = threading.Lock()
        self._wanted = False
        self._updating: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self._opening: Future[None] | None = None
        self.stats = UpdateStats()

    # -- paths ------------------------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        from headd_plane.paths import index_path_of

        return index_path_of(self.store)

    @property
    def state_path(self) -> Path:
        from headd_plane.paths import state_path_of

        return state_path_of(self.store)

    # -- threads ----------------------------------------------------------------------------

    def _writer_plane(self) -> Plane:
        """The writer plane, opened (and migrated) on first use; only ever on the writer thread."""
        if self._plane is None:
            if self._open_plane is None:
                from headd_plane.plane import open_plane

                self._open_plane = open_plane
            self._plane = self._open_plane(self.store, embedder=self.embedder, hook=self._hook)
            self._watch_work_tree(self._plane)
        return self._plane

    def _watch_work_tree(self, plane: Plane) -> None:
        """Learn the dirty work tree from inotify from here on (the plane opens after READY,
        so READY never waits for the watches); the first update still scans every file, since
        an edit may predate its watch. A failure only leaves the scan."""
        if not self.watches_work_tree:
            return
        started = time.perf_counter()
        try:
            watching = plane_calls.watch_work_tree(plane)
        except Exception:
            log.exception("the work-tree watch could not start; updates scan the whole tree")
            return
        log.debug(
            "work-tree watch %s in %.1f ms",
            "on" if watching else "unavailable",
            (time.perf_counter() - started) * 1000.0,
        )

    def _hook(self, point: str) -> None:
        """The indexer's hook points: where a stopping daemon may cut a long update short."""
        if self._stopping.is_set():
            raise UpdateStopped(f"the daemon is stopping; stopped at {point}", {"at": point})

    def stop(self) -> None:
        """Stop scheduling updates and cut a running one at its next hook point."""
        self._stopping.set()
        self._wanted = False

    def open_in_background(self) -> None:
        """Open the writer on its thread without waiting (the daemon calls this after READY).

        Importing the plane and opening (creating, migrating) its files costs time that no first
        answer needs (READY within 0.5 s at 10,000 memories). Writer calls queue behind the open on
        the one writer thread; reader calls wait for it (:meth:`on_reader`), so no reader sees files
        before their migration. A failure is logged and the next writer call retries.
        """
        if self._opening is None:
            self._opening = self._writer.submit(self._open_logged)

    def _open_logged(self) -> None:
        started = time.perf_counter()
        try:
            self._writer_plane()
        except HeaddError as exc:
            log.error("the SQLite plane could not be opened: %s: %s", exc.code, exc.message)
        except Exception:
            log.exception("the SQLite plane could not be opened")
        else:
            log.debug("plane opened in %.1f ms", (time.perf_counter() - started) * 1000.0)

    def _reader(self) -> Retrieval:
        """This reader thread's read-only retrieval (opened once the writer created the files)."""
        retrieval: Retrieval | None = getattr(self._local, "retrieval", None)
        if retrieval is None:
            from headd_plane.plane import open_retrieval

            retrieval = open_retrieval(self.store, embedder=self.embedder)
            self._local.retrieval = retrieval
            with self._reader_lock:
                self._reader_dbs.append(retrieval.db)
        return retrieval

    def submit(self, fn: Callable[[Plane], T]) -> Future[T]:
        """Queue ``fn(plane)`` on the writer thread; safe to call from any thread (the vector
        fill persists its batches from the embed thread this way, without the event loop)."""
        return self._writer.submit(lambda: fn(self._writer_plane()))

    async def on_writer(self, fn: Callable[[Plane], T]) -> T:
        """Run ``fn(plane)`` on the writer thread."""
        return await asyncio.wrap_future(self.submit(fn))

    async def on_reader(self, fn: Callable[[Retrieval], T]) -> T:
        """Run ``fn(retrieval)`` on a reader thread; the writer opens the files first if needed."""
        if self._opening is not None and not self._opening.done():
            await asyncio.wrap_future(self._opening)
        if not self.index_path.exists():
            await self.on_writer(lambda plane: None)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, lambda: fn(self._reader()))

    # -- the background update ----------------------------------------------------------------

    def schedule_update(self, _version: object = None) -> None:
        """Ask for an update (called on the loop after the load and after each advance)."""
        if self._stopping.is_set():
            return
        self._wanted = True
        self._asked_at = time.monotonic()
        if self._updating is None or self._updating.done():
            self._updating = asyncio.ensure_future(self._update_loop())

    @property
    def updating(self) -> bool:
        return self._updating is not None and not self._updating.done()

    async def wait_idle(self) -> None:
        while self._updating is not None and not self._updating.done():
            await asyncio.shield(self._updating)

    async def _quiet_moment(self) -> None:
        """Wait until no advance asked for an update for ``update_quiet_s``, or at most
        ``update_max_wait_s`` from now."""
        deadline = time.monotonic() + self.update_max_wait_s
        while not self._stopping.is_set():
            wait = min(self._asked_at + self.update_quiet_s, deadline) - time.monotonic()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def _update_loop(self) -> None:
        while self._wanted:
            await self._quiet_moment()
            self._wanted = False
            started = time.perf_counter()
            try:
                report = await self.on_writer(self._background_update)
            except asyncio.CancelledError:
                raise
            except UpdateStopped as stopped:
                log.info("index update stopped for shutdown: %s", stopped.message)
                return
            except HeaddError as exc:
                self.stats.last_error = exc.message
                self.stats.last_error_code = exc.code
                log.warning("background index update failed: %s: %s", exc.code, exc.message)
                continue
            except Exception as exc:  # never fatal: the next advance tries again
                self.stats.last_error = type(exc).__name__
                self.stats.last_error_code = None
                log.exception("background index update failed")
                continue
            self.stats.runs += 1
            self.stats.last_ms = (time.perf_counter() - started) * 1000.0
            self.stats.last_sha = report.head_sha
            self.stats.last_error = None
            self.stats.last_error_code = None
            log.info(
                "index updated to %s in %.0f ms",
                report.head_sha[:12],
                self.stats.last_ms,
            )

    async def catch_up(self, tip: str | None, bound: float = CATCH_UP_S) -> bool:
        """Bring the index to ``tip`` now, without the background update's quiet wait, unless it
        is there already; True when it is there within ``bound`` seconds. The update runs on the
        writer thread and finishes even when the bound passes (the next call finds it done)."""
        done = self.submit(lambda plane: self._catch_up(plane, tip))
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(done)), bound)
        except TimeoutError:
            return False

    def _catch_up(self, plane: Plane, tip: str | None) -> bool:
        if tip is None:  # an unborn branch: nothing to index
            return True
        if self.stats.last_sha == tip or _indexed_sha(plane) == tip:
            return True
        started = time.perf_counter()
        try:
            report = self._background_update(plane)
        except (HeaddError, StorageFailure) as exc:
            log.warning("index catch-up failed: %s: %s", exc.code, exc.message)
            return False
        self.stats.runs += 1
        self.stats.last_ms = (time.perf_counter() - started) * 1000.0
        self.stats.last_sha = report.head_sha
        return self.stats.last_sha == tip

    def _background_update(self, plane: Plane) -> IndexUpdateAnswer:
        """``update``, embedding new chunks only when the index already carries vectors (a
        store opted in with ``index.rebuild {embed: true}``): a first full embed would hold the
        writer, and with it every reinforce, for as long as the model takes."""
        embed = self.embedder is not None and _holds_vectors(plane)
        try:
            return plane_calls.index_update(plane, embed=embed)
        finally:
            release_free_memory()

    def status(self) -> IndexUpdates:
        return IndexUpdates(
            updates=self.stats.runs,
            updating=self.updating,
            last_update_ms=None if self.stats.last_ms is None else round(self.stats.last_ms, 1),
            indexed_sha=self.stats.last_sha,
            last_error=self.stats.last_error,
            last_error_code=self.stats.last_error_code,
        )

    # -- methods ----------------------------------------------------------------------------

    async def answer(
        self, request: PlaneRequest, now: datetime, ranked: RankedPool | None = None
    ) -> PlaneAnswer:
        """Answer a plane method (``headd_plane.answer``): a read on a reader thread, a write on
        the writer, by the one rule of ``is_read``."""
        context = Context(self.store, now, self.trace_root, ranked)
        if is_read(request):
            return await self.on_reader(lambda r: answer(request, r, context))
        return await self.on_writer(lambda p: self._write(request, p, context))

    @staticmethod
    def _write(request: PlaneRequest, plane: Plane, context: Context) -> PlaneAnswer:
        """A write; after a rebuild, the memory its bulk load held is handed back to the system
        (as after an update)."""
        try:
            return answer(request, plane, context)
        finally:
            if isinstance(request, IndexRebuild):
                release_free_memory()

    async def traces_links(self, path: str) -> TracesLinksAnswer:
        """``traces.links``: the sessions ``path`` was linked to, from a reader."""
        return await self.on_reader(lambda r: plane_calls.traces_links(r.db.conn, path))

    async def state_usage(self, path: str) -> StateUsageAnswer:
        """``state.usage``: ``path``'s usage row, from a reader."""
        return await self.on_reader(lambda r: plane_calls.state_usage(r.db.conn, path))

    async def state_access_paths(self) -> list[str]:
        return await self.on_reader(lambda r: plane_calls.state_access_paths(r.db.conn))

    async def state_prune(self, paths: list[str]) -> StatePruneAnswer:
        return await self.on_writer(lambda p: plane_calls.state_prune(p.db.conn, paths))

    async def record_wrote(self, links: plane_calls.WroteLinks) -> int:
        """Note a session commit's memories; a failure is logged, never the commit's failure
        (the files themselves carry the provenance, so nothing durable is lost)."""
        try:
            return await self.on_writer(lambda p: plane_calls.record_wrote(p.db.conn, links))
        except (HeaddError, StorageFailure) as exc:
            log.warning("recording session links failed: %s", exc.code)
            return 0

    def shutdown(self) -> None:
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        with self._reader_lock:
            for db in self._reader_dbs:
                db.close()
        if self._plane is not None:
            plane_calls.unwatch_work_tree(self._plane)
            self._plane.close()


def _indexed_sha(plane: Plane) -> str | None:
    """The commit ``index.db`` reflects, None when it reflects none yet."""
    try:
        return plane_calls.indexed_sha(plane.db.conn)
    except HeaddError:
        return None


def _holds_vectors(plane: Plane) -> bool:
    row = plane.db.conn.execute("SELECT EXISTS (SELECT 1 FROM embeddings)").fetchone()
    return bool(row and row[0])
