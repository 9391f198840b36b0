"""The daemon's ``sleep.*`` methods: thin shells over ``headd.sleep`` on one worker thread.

Runs, plans and merges read versions through the follower (its cached, incrementally advanced
versions), write only the run's own branch, and land on main under the session manager's commit
lock, so a merge and a session commit never race for the ref. One thread at background priority:
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

import msgspec

from headd.daemon.methods import SleepMerge, SleepPlan, SleepResume, SleepReview, SleepRun
from headd.errors import InvalidParams
from headd.head.indexes import IndexedView
from headd.store import git_io
from headd.thread_priority import lower_thread_priority

if TYPE_CHECKING:
    from headd.daemon.follow import RefFollower
    from headd.store.manager import SessionManager

log = logging.getLogger(__name__)

T = TypeVar("T")

SleepRequest = SleepPlan | SleepRun | SleepReview | SleepMerge | SleepResume


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
    _worker: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            1, thread_name_prefix="headd-sleep", initializer=lower_thread_priority
        )
    )

    async def call(self, request: SleepRequest) -> Any:
        loop = asyncio.get_running_loop()

        def versions(sha: str) -> IndexedView:
            return asyncio.run_coroutine_threadsafe(self.follower.at(sha), loop).result()

        result = await loop.run_in_executor(self._worker, lambda: self._blocking(request, versions))
        if isinstance(request, SleepMerge) and getattr(result, "merged", False):
            await self.follower.advance("sleep merge")
        return result

    def _blocking(self, request: SleepRequest, versions: Callable[[str], IndexedView]) -> Any:
        from headd.sleep.merge import merge_run
        from headd.sleep.review import plan_run, review_run
        from headd.sleep.run import resume_run, start_run

        repo = git_io.open_repo(self.store)
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
                )
            case SleepResume(run=run, date=day):
                return resume_run(repo, run, day=run_day(day, self.clock()), versions=versions)
            case SleepReview(run=run):
                return review_run(repo, run)
            case SleepMerge(run=run, skip_gate=skip_gate):
                lock = self.sessions.exclusive() if self.sessions is not None else None
                return merge_run(
                    repo,
                    run,
                    versions=versions,
                    today=self.clock().date(),
                    skip_gate=skip_gate,
                    lock=lock,
                )
        raise InvalidParams(f"not a sleep request: {type(request).__name__}")

    def status(self) -> dict[str, Any]:
        """``sleep.status`` (and ``status.last_sleep``): the latest run, read from its branch."""
        from headd.sleep.review import sleep_status

        return msgspec.to_builtins(sleep_status(git_io.open_repo(self.store)))

    def last_sleep(self) -> dict[str, Any] | None:
        """``status.last_sleep``: the latest run (id, base, head, merged, per-phase counts), or
        None before the first; what the MCP bridge's ``memory_status`` passes on."""
        latest = self.status()
        return latest if latest.get("run_id") else None

    def shutdown(self) -> None:
        self._worker.shutdown(wait=True)
