"""Writing head snapshots in the background, so the next cold start can skip the parser.

After the load and after each advance the daemon calls :meth:`SnapshotWriter.schedule` with the
new version. Writes are coalesced: one task at a time, which waits until ``interval`` seconds have
passed since the previous write and then snapshots the *latest* version scheduled, so a burst of
commits costs one write. Encoding and writing run on a thread of their own; no answer waits for
them. The version a cold start decoded from its own snapshot is not written again; any other
existing file for a commit is overwritten (the cold start may have refused it as damaged). Failures are logged and kept for ``status``; they never stop the daemon.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from headd.daemon.snapshot_store import SnapshotStore
    from headd.head.version import HeadVersion

from headd.errors import HeaddError
from headd.memory_trim import release_free_memory
from headd.wire.answers import SnapshotStatus

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 30.0


@dataclass
class SnapshotStats:
    writes: int = 0
    last_sha: str | None = None
    last_ms: float | None = None
    last_bytes: int | None = None
    last_error: str | None = None


class SnapshotWriter:
    """The coalescing background writer of one store's snapshots."""

    def __init__(
        self,
        store: SnapshotStore,
        encode: Callable[[HeadVersion], bytes],
        *,
        interval: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._encode = encode
        self.interval = interval
        self._clock = clock
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="headd-snapshot")
        self._wanted: HeadVersion | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_write_at: float | None = None
        self._stopping = False
        #: The newest version asked for: at shutdown its snapshot is written if it is not yet.
        self._latest: HeadVersion | None = None
        #: Commits whose stored snapshot is known to decode: the one the cold start used, and
        #: every one written here. Any other existing file is overwritten (it may be the damaged
        #: or stale snapshot the cold start refused).
        self._known_good: set[str] = set()
        self.stats = SnapshotStats()

    def loaded_from(self, sha: str) -> None:
        """The cold start decoded the snapshot of ``sha``: it needs no rewrite."""
        self._known_good.add(sha)

    def remember(self, version: HeadVersion) -> None:
        """The loaded version, before any write is scheduled: a stop before the first one (the
        hooks run just after READY) still leaves its snapshot, unless the cold start decoded
        it, so a git load is never paid twice for one commit."""
        if not self._stopping and self._latest is None:
            self._latest = version

    def schedule(self, version: HeadVersion) -> None:
        """Ask for a snapshot of ``version`` (called on the loop; returns at once)."""
        if self._stopping or version is None:
            return
        self._latest = version
        self._wanted = version
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    @property
    def writing(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        while self._wanted is not None and not self._stopping:
            if self._last_write_at is not None:
                wait = self._last_write_at + self.interval - self._clock()
                if wait > 0:
                    await asyncio.sleep(wait)
                    if self._stopping:
                        return
            version, self._wanted = self._wanted, None
            loop = asyncio.get_running_loop()
            try:
                await loop.run_in_executor(self._thread, self._write, version)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never fatal: the next advance tries again
                self.stats.last_error = (
                    f"{exc.code}: {exc.message}"
                    if isinstance(exc, HeaddError)
                    else type(exc).__name__
                )
                log.warning("writing the head snapshot failed: %s", self.stats.last_error)
            finally:
                self._last_write_at = self._clock()

    def _write(self, version: HeadVersion) -> None:
        sha = version.sha
        if sha in self._known_good and self.store.has(sha):
            return
        started = time.perf_counter()
        try:
            data = self._encode(version)
            self.store.write(sha, data)
        finally:
            release_free_memory()
        self._known_good.add(sha)
        took = (time.perf_counter() - started) * 1000.0
        self.stats.writes += 1
        self.stats.last_sha = sha
        self.stats.last_ms = took
        self.stats.last_bytes = len(data)
        self.stats.last_error = None
        log.info("head snapshot of %s written (%d bytes) in %.0f ms", sha[:12], len(data), took)

    async def wait_idle(self) -> None:
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    def stop(self) -> None:
        """Write nothing more; a write in progress finishes (it is atomic either way)."""
        self._stopping = True
        self._wanted = None
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def shutdown(self) -> None:
        """Wait for a write in progress, then make sure the newest version asked for has its
        snapshot: a stop right after READY (the write still waiting for its interval, or not
        started) would otherwise leave the next start to load from git again. At most one
        write, the size of any other."""
        self._thread.shutdown(wait=True)
        latest, self._latest = self._latest, None
        if latest is None:
            return
        try:
            self._write(latest)
        except Exception as exc:  # never fatal: the next start loads from git
            log.warning("writing the head snapshot at stop failed: %s", exc)

    def status(self) -> SnapshotStatus:
        return SnapshotStatus(
            writes=self.stats.writes,
            writing=self.writing,
            last_sha=self.stats.last_sha,
            last_ms=None if self.stats.last_ms is None else round(self.stats.last_ms, 1),
            last_bytes=self.stats.last_bytes,
            last_error=self.stats.last_error,
        )
