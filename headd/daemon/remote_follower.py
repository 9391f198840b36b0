"""The daemon's side of following a git remote: when rounds run, and what status shows.

Rounds (``headd.remote.sync``) run on one thread of their own, never on the event loop, because
they wait on the network. They run at start, every ``interval`` seconds and on ``sync`` requests.
Shortly after each session commit (``poke``) the tip is pushed as it is, without a fetch first
(a whole round only when the remote moved): the commit answers first, and the push follows
within about a second, so no commit ever waits on the network. Pokes that arrive while a round is
running are folded into one more round after it.

``sync`` waits for its round at most ``SYNC_WAIT`` seconds and then answers ``running`` (the
round goes on, and ``status.remote`` shows how it ended): a remote that hangs until the git
deadline never holds a client for a minute. At close the git a round waits on is killed with
everything it started (its process group), so a stop never waits on the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor

from headd.remote.sync import RemoteSync
from headd.wire.remote_answers import Conflict, RemoteStatus, RoundReport

log = logging.getLogger(__name__)

#: Seconds between a session commit and the round that pushes it: commits in a burst share one.
PUSH_DELAY = 0.2
#: Seconds ``sync`` waits for its round before answering that it is still running.
SYNC_WAIT = 10.0


class RemoteFollower:
    def __init__(self, sync: RemoteSync, interval: float) -> None:
        self.sync = sync
        self.interval = interval
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="headd-remote")
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="headd-remote")

    def poke(self) -> None:
        """A local commit landed: push it soon."""
        self._wake.set()

    async def round_now(self, wait: float = SYNC_WAIT) -> RoundReport:
        """One round, now (``sync``): waits for a round already running, then runs its own;
        answers ``running`` when the round has not ended within ``wait`` seconds."""
        future = asyncio.get_running_loop().run_in_executor(self._executor, self.sync.round)
        try:
            return await asyncio.wait_for(asyncio.shield(future), wait)
        except TimeoutError:
            return RoundReport(action="running", local=None, remote=None, attempts=0)

    async def resolve(self, path_or_id: str) -> tuple[Conflict, ...]:
        """Mark a conflict resolved (after any round under way)."""
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self.sync.resolve, path_or_id
        )

    def status(self) -> RemoteStatus:
        return self.sync.status()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        poked = False
        while not self._closing:
            work = self.sync.push_local if poked else self.sync.round
            try:
                report = await loop.run_in_executor(self._executor, work)
                if report.action not in ("up-to-date", "failed"):
                    log.info("remote %s: %s", self.sync.upstream, report.action)
            except Exception:  # a bug in a round must not end the loop
                log.exception("remote round failed")
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.interval)
                await asyncio.sleep(PUSH_DELAY)
                poked = True
            except TimeoutError:
                poked = False
            self._wake.clear()

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        # A round cut short is safe to abandon: its rescue refs make the next one replay it. Its
        # git dies now, with what it started, so the round's thread ends within moments.
        self.sync.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
