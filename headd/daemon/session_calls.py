"""The ``session.*`` methods: the store's session manager, run on a small pool of its own.

The session manager is thread-safe (one lock per session, taken without waiting, so overlapping
calls on one session answer ``ERR_SESSION_LOCKED``; one commit lock for the shared work tree), so
one agent's slow commit does not hold up another agent's ``apply``. A commit is answered only once
the follower stands on the landed commit (read-your-writes), and, when it carries transcript
provenance, once the plane recorded one ``wrote`` link per memory it landed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from headd_plane.calls import WroteLinks

from headd.daemon.follow import RefFollower
from headd.daemon.plane_service import PlaneService
from headd.errors import MethodNotFound
from headd.head.indexes import IndexedView
from headd.wire.methods import (
    SessionApply,
    SessionClose,
    SessionCommit,
    SessionList,
    SessionOpen,
    SessionRebase,
)

if TYPE_CHECKING:
    from headd.store.commit import Provenance
    from headd.store.manager import SessionManager
    from headd.store.ports import View
    from headd.store.results import CommitResult, OpenResult

log = logging.getLogger(__name__)

T = TypeVar("T")

SESSION_THREADS = 4
#: git's index is written once no commit came for this long (seconds), or at the latest this
#: long after a commit left it owed: a burst of commits shares one whole-file write.
INDEX_QUIET_S = 0.2
INDEX_MAX_WAIT_S = 2.0

SessionRequest = (
    SessionOpen | SessionApply | SessionCommit | SessionRebase | SessionClose | SessionList
)


class SessionCalls:
    """The session methods over one :class:`SessionManager` (None: a daemon without sessions)."""

    def __init__(
        self,
        sessions: SessionManager | None,
        follower: RefFollower,
        plane: PlaneService | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._sessions = sessions
        self._follower = follower
        self._plane = plane
        self._clock = clock
        self._pool = ThreadPoolExecutor(SESSION_THREADS, thread_name_prefix="headd-session")
        #: The write of git's index the commits' answers left owed (``_write_index``).
        self._index_write: asyncio.Future[None] | None = None
        self._index_asked = 0.0
        self._index_wanted = False

    def _registry(self) -> SessionManager:
        if self._sessions is None:
            raise MethodNotFound("sessions are not available in this build")
        return self._sessions

    def count(self) -> int:
        """How many sessions are open (0 when there is no manager, or its log cannot be read)."""
        if self._sessions is None:
            return 0
        try:
            return len(self._sessions.list().sessions)
        except Exception:  # a broken log must not take status down
            log.exception("listing sessions for status failed")
            return 0

    async def view(self, session: str) -> IndexedView:
        """The session's overlay on its base, as of the ref's tip now."""
        registry = self._registry()
        await self._follower.current()
        view = await self._in_pool(lambda: registry.view(session))
        if not isinstance(view, IndexedView):  # the follower's versions and their overlays are
            raise TypeError(f"a session view is an IndexedView, not {type(view).__name__}")
        return view

    async def call(self, request: SessionRequest) -> object:
        registry = self._registry()
        await self._follower.current()
        match request:
            case SessionOpen(id=wanted, base=base):

                def expire_then_open() -> OpenResult:
                    # A new session is when sessions pile up: the idle ones expire first, in
                    # the same hop to the pool (each hop is a thread handoff on the answer's path).
                    registry.expire_idle()
                    return registry.open(wanted, base)

                return await self._in_pool(expire_then_open)
            case SessionApply(session=session_id, ops=ops):
                return await self._in_pool(lambda: registry.apply(session_id, ops))
            case SessionCommit():
                return await self.commit(registry, request)
            case SessionRebase(session=session_id, onto=onto):
                return await self._in_pool(lambda: registry.rebase(session_id, onto))
            case SessionClose(session=session_id):
                return await self._in_pool(lambda: registry.close(session_id))
            case SessionList():
                await self._in_pool(registry.expire_idle)
                return await self._in_pool(registry.list)
        raise MethodNotFound(f"no session handler for {type(request).__name__}")

    async def commit(self, registry: SessionManager, request: SessionCommit) -> CommitResult:
        """Land the session, then bring the follower to the landed commit before answering, so
        the next read on any connection sees it (read-your-writes). Per-step times at DEBUG."""
        from headd.store.provenance import provenance_from

        session_id, message = request.session, request.message
        provenance = provenance_from(request.session_id, request.prompt_id, request.turn)
        started = time.perf_counter()
        cpu: list[float] = []

        def commit() -> CommitResult:
            thread_started = time.thread_time()
            try:
                return registry.commit(
                    session_id,
                    message,
                    provenance=provenance,
                    rebase=request.rebase,
                    index_later=True,
                )
            finally:
                cpu.append(time.thread_time() - thread_started)

        result = await self._in_pool(commit)
        self._write_index(registry)
        self._offer_landed(registry, result)
        landed = time.perf_counter()
        view = await self._follower.current()
        advanced = time.perf_counter()
        if provenance is not None:
            await self._record_wrote(result, view, provenance)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "session.commit %s: %s, commit %.1f ms (%.1f ms CPU), advance %.1f ms, "
                "links %.1f ms",
                session_id,
                result.outcome,
                (landed - started) * 1e3,
                (cpu[0] if cpu else 0.0) * 1e3,
                (advanced - landed) * 1e3,
                (time.perf_counter() - advanced) * 1e3,
            )
        return result

    def _offer_landed(self, registry: SessionManager, result: CommitResult) -> None:
        """Offer the follower the commit's version the session already built (its judged view,
        when that is what landed), so the advance below neither parses nor freezes again."""
        if result.outcome != "committed" or not result.paths or result.sha is None:
            return
        view = registry.take_landed(result.sha)
        if isinstance(view, IndexedView) and view.sha is not None:
            self._follower.offer(view.sha, result.sha, view.indexes, result.paths)

    def _write_index(self, registry: SessionManager) -> None:
        """Ask for the write of the git index entries the commit left owed: once no commit came
        for ``INDEX_QUIET_S``, or ``INDEX_MAX_WAIT_S`` after the first ask, on a session thread;
        commits in a row share one write (docs/design/store.md, "git's index after the
        answer")."""
        self._index_asked = time.monotonic()
        self._index_wanted = True
        if self._index_write is None or self._index_write.done():
            self._index_write = asyncio.ensure_future(self._index_loop(registry))

    async def _index_loop(self, registry: SessionManager) -> None:
        while self._index_wanted:
            deadline = time.monotonic() + INDEX_MAX_WAIT_S
            while (wait := min(self._index_asked + INDEX_QUIET_S, deadline) - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            self._index_wanted = False
            try:
                await self._in_pool(registry.flush_index)
            except Exception:  # the next writer of the checkout writes them, or says why not
                log.exception("writing git's index after commits failed")

    async def index_written(self) -> None:
        """Write the index entries commits left owed, at once (for readers of ``git status``)."""
        if self._sessions is not None:
            await self._in_pool(self._sessions.flush_index)

    async def publish(
        self, render: Callable[[View], Mapping[str, str]]
    ) -> tuple[int, tuple[str, ...], CommitResult]:
        """``SessionManager.publish``, then the follower brought to what landed (as ``commit``)."""
        registry = self._registry()
        published = await self._in_pool(lambda: registry.publish(render))
        await self._follower.current()
        return published

    async def _record_wrote(
        self, result: CommitResult, view: IndexedView, provenance: Provenance
    ) -> None:
        """``memory_session_links``: one ``wrote`` row per memory the landed commit holds."""
        if self._plane is None or result.outcome != "committed":
            return
        paths = tuple(p for p in (result.paths or ()) if view.record(p) is not None)
        if not paths:
            return
        from headd_plane.state import iso_ms

        links = WroteLinks(
            session_id=provenance.session_id,
            prompt_id=provenance.prompt_id,
            turn=provenance.turn,
            at=iso_ms(self._clock()),
            paths=paths,
        )
        await self._plane.record_wrote(links)

    async def _in_pool(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    def shutdown(self) -> None:
        if self._index_write is not None:
            self._index_write.cancel()
        self._pool.shutdown(wait=True)
        if self._sessions is not None:
            try:  # a stopped daemon leaves git's index written (a restart would, too)
                self._sessions.flush_index()
            except Exception:
                log.exception("writing git's index as the daemon stops failed")
