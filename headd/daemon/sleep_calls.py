"""The daemon's ``sleep.*`` methods: thin shells over ``headd.sleep`` on one worker thread.

Runs, plans and merges read versions through the follower (its cached, incrementally advanced
versions), write only the run's own branch, and land on main under the session manager's commit
lock, so a merge and a session commit never race for the ref; a discard deletes only the run's
branch. One thread at background priority:
two runs never interleave, and a run leaves the cores to searches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from headd.errors import InvalidParams
from headd.head.indexes import IndexedView
from headd.store import git_io
from headd.thread_priority import lower_thread_priority
from headd.wire.answers import SleepStatusAnswer
from headd.wire.methods import (
    SleepDiscard,
    SleepMerge,
    SleepPlan,
    SleepResume,
    SleepReview,
    SleepRun,
)

if TYPE_CHECKING:
    import numpy as np
    from headd_plane.sidecar import SidecarEntry

    from headd.daemon.follow import RefFollower
    from headd.daemon.plane_service import PlaneService
    from headd.daemon.vectors import VectorService
    from headd.store.manager import SessionManager

log = logging.getLogger(__name__)

T = TypeVar("T")

SleepRequest = SleepPlan | SleepRun | SleepReview | SleepMerge | SleepResume | SleepDiscard


def run_day(value: str | None, now: datetime) -> date:
    """``--date``: an ISO calendar date, else today (UTC)."""
    if value is None:
        return now.date()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidParams(f"date must be YYYY-MM-DD: {value!r}", {"date": value}) from None


@dataclass
class SleepCalls:
    store: Path
    follower: RefFollower
    sessions: SessionManager | None
    clock: Callable[[], datetime]
    plane: PlaneService | None = None
    vectors: VectorService | None = None
    _worker: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            1, thread_name_prefix="headd-sleep", initializer=lower_thread_priority
        )
    )

    async def call(self, request: SleepRequest) -> Any:
        loop = asyncio.get_running_loop()

        def versions(sha: str) -> IndexedView:
            return asyncio.run_coroutine_threadsafe(self.follower.at(sha), loop).result()

        reads_usage = not isinstance(request, SleepReview | SleepDiscard)
        live = await self._live_usage() if reads_usage else None
        mined: list[tuple[str, list[tuple[str, str, float]]]] = []
        result = await loop.run_in_executor(
            self._worker,
            lambda: self._blocking(request, versions, live, lambda r, e: mined.append((r, e))),
        )
        for run_id, edges in mined:
            await self._record_edges(run_id, edges)
        if isinstance(request, SleepMerge) and getattr(result, "merged", False):
            await self.follower.advance("sleep merge")
        await self._record(result)
        return result

    async def _record_edges(self, run_id: str, edges: list[tuple[str, str, float]]) -> None:
        """A run's mined edges into ``index.db`` (reporting, like the rows: logged on failure)."""
        if self.plane is None:
            return
        from headd_plane.sleep_rows import record_derived_edges

        at = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
        try:
            await self.plane.on_writer(
                lambda plane: record_derived_edges(plane.db.conn, run_id, edges, at)
            )
        except Exception as exc:
            log.warning("sleep: derived edges not written (%s)", exc)

    async def _record(self, result: object) -> None:
        """The run's ``sleep_runs``/``sleep_phases`` rows on the plane's writer (reporting only:
        a failure is logged, never the call's)."""
        if self.plane is None:
            return
        from headd_plane.sleep_rows import record_merge, record_run

        from headd.sleep.merge_report import MergeReport
        from headd.wire.answers import RunReport

        try:
            if isinstance(result, RunReport):
                report = result
                await self.plane.on_writer(lambda plane: record_run(plane.db.conn, report))
            elif isinstance(result, MergeReport) and result.merged and result.landed:
                run_id, landed = result.run_id, result.landed
                at = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
                await self.plane.on_writer(
                    lambda plane: record_merge(plane.db.conn, run_id, landed, at)
                )
        except Exception as exc:  # reporting only: the branch and its trailers stand
            log.warning("sleep: run rows not written (%s)", exc)

    async def _live_usage(self) -> list[SidecarEntry] | None:
        """The state plane's usage rows now (None without a plane, or when it cannot answer:
        the run then reads the committed sidecar alone)."""
        if self.plane is None:
            return None
        from headd_plane.sidecar import access_entries

        try:
            return await self.plane.on_reader(lambda reader: access_entries(reader.db.conn))
        except Exception as exc:  # the plane is optional to a run; say so and go on
            log.warning("sleep: no live usage rows (%s); the committed sidecar stands", exc)
            return None

    def _vectors_of(self, view: IndexedView) -> dict[str, np.ndarray] | None:
        """Unit vectors of ``view``'s active records the vector cache holds (None when off)."""
        cache = self.vectors.cache if self.vectors is not None else None
        if cache is None:
            return None
        import numpy as np

        out: dict[str, np.ndarray] = {}
        for record in view.indexes.active:
            vector = cache.vector_of(record)
            if vector is None:
                continue
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[record.path] = np.asarray(vector, dtype=np.float32) / norm
        return out

    def _blocking(
        self,
        request: SleepRequest,
        versions: Callable[[str], IndexedView],
        live: list[SidecarEntry] | None,
        edges: Callable[[str, list[tuple[str, str, float]]], None],
    ) -> Any:
        from headd.sleep.branch import MAIN
        from headd.sleep.discard import discard_run
        from headd.sleep.merge import merge_run
        from headd.sleep.review import plan_run, review_run
        from headd.sleep.run import resume_run, start_run

        repo = git_io.open_repo(self.store)

        def vectors_at(ref: str) -> dict[str, np.ndarray] | None:
            sha = git_io.resolve_ref(repo, ref)
            return None if sha is None or self.vectors is None else self._vectors_of(versions(sha))

        match request:
            case SleepPlan(date=day, phases=phases):
                return plan_run(
                    repo, day=run_day(day, self.clock()), phases=phases, versions=versions
                )
            case SleepRun(date=day, phases=phases, dry_run=dry_run):
                return start_run(
                    repo,
                    day=run_day(day, self.clock()),
                    phases=phases,
                    dry_run=dry_run,
                    versions=versions,
                    live_usage=live,
                    vectors=vectors_at(MAIN),
                    edges=edges,
                )
            case SleepResume(run=run, date=day):
                return resume_run(
                    repo,
                    run,
                    day=run_day(day, self.clock()),
                    versions=versions,
                    live_usage=live,
                    vectors=vectors_at("refs/heads/" + run),
                    edges=edges,
                )
            case SleepReview(run=run, diff=diff):
                return review_run(repo, run, diff=diff)
            case SleepDiscard(run=run):
                return discard_run(repo, run)
            case SleepMerge(run=run, skip_gate=skip_gate):
                lock = self.sessions.exclusive() if self.sessions is not None else None
                return merge_run(
                    repo,
                    run,
                    versions=versions,
                    today=self.clock().date(),
                    skip_gate=skip_gate,
                    lock=lock,
                    live_usage={entry.path: entry for entry in live or ()},
                )
        raise InvalidParams(f"not a sleep request: {type(request).__name__}")

    def status(self) -> SleepStatusAnswer:
        """``sleep.status`` (and ``status.last_sleep``): the latest run, read from its branch."""
        from headd.sleep.review import sleep_status

        return sleep_status(git_io.open_repo(self.store))

    def last_sleep(self) -> SleepStatusAnswer | None:
        """``status.last_sleep``: the latest run (id, base, head, merged, per-phase counts), or
        None before the first; what the MCP bridge's ``memory_status`` passes on."""
        latest = self.status()
        return latest if latest.run_id else None

    def shutdown(self) -> None:
        self._worker.shutdown(wait=True)
