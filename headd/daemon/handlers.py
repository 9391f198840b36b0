"""The methods themselves: one ``case`` per typed request, answering in the contract's shapes.

``Service.dispatch`` is what ``json_rpc`` calls: it decodes the params into their Struct
(``methods.decode_request``) and matches on the type. Every read first asks the follower for the
version at the ref's tip (which advances when the ref moved), or for the version ``at`` names, or
for a session's overlay on its base. Slow work (the gate, session writes and commits) runs on a
worker thread so the event loop keeps answering. Session calls run on a small pool of their own:
the session manager is thread-safe (one lock per session, taken without waiting, so overlapping
calls on one session answer ``ERR_SESSION_LOCKED``; one commit lock for the shared work tree), so
one agent's slow commit does not hold up another agent's ``apply``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from msgspec import Raw

from headd.daemon.follow import RefFollower
from headd.daemon.head_api import HeadApi, paths_of, record_count, skipped_count, skipped_files
from headd.daemon.methods import (
    Advance,
    ByContentHash,
    ByEntity,
    ByFrameKey,
    Filter,
    Gate,
    Inbound,
    IndexRebuild,
    IndexStatus,
    IndexUpdate,
    Read,
    Recall,
    Reinforce,
    Request,
    Resolve,
    Search,
    SessionApply,
    SessionClose,
    SessionCommit,
    SessionList,
    SessionOpen,
    SessionRebase,
    Skipped,
    StateExport,
    StateImport,
    Status,
    TracesIndex,
    TracesSearch,
    TracesShow,
    VectorsFill,
    decode_request,
)
from headd.daemon.plane_calls import WroteLinks, check_provenance_value
from headd.daemon.plane_service import PlaneService
from headd.daemon.vectors import NO_VECTORS, VectorService
from headd.embed.factory import embedder_state
from headd.errors import InvalidParams, MethodNotFound, ModelUnavailable, PathNotFound
from headd.record import record_to_wire

log = logging.getLogger(__name__)

T = TypeVar("T")

RESOLVE_MAX_STEPS = 64
SESSION_THREADS = 4


@functools.cache
def daemon_version() -> str:
    """The installed distribution's version (robust to how the package was installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("headd")
    except PackageNotFoundError:
        return "0+unknown"


@functools.lru_cache(maxsize=4)
def _iso_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_utc(moment: datetime) -> str:
    """``2026-11-30T09:21:35Z`` (memoized per second: every search stamps ``now``)."""
    return _iso_second(int(moment.timestamp()))


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Service:
    """Everything a request may touch, and the handlers over it."""

    store: Path
    follower: RefFollower
    head: HeadApi
    sessions: Any = None
    vectors: VectorService | None = None
    plane: PlaneService | None = None
    #: The background head-snapshot writer (``snapshots.SnapshotWriter``), when there is one.
    snapshots: Any = None
    socket_path: Path | None = None
    embedder: str = "off"
    clock: Callable[[], datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)
    _writer: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            SESSION_THREADS, thread_name_prefix="headd-session"
        )
    )
    _default_scope: Any = None
    _compute: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="headd-gate")
    )

    async def dispatch(self, method: str, params: Raw | None) -> Any:
        return await self.handle(decode_request(method, params))

    async def handle(self, request: Request) -> Any:
        match request:
            case Status():
                return await self.status()
            case Search():
                return await self.search(request)
            case Read(path=path, at=at, session=session):
                view = await self.view(at, session)
                record = view.record(path)
                return {
                    "sha": view.sha,
                    "record": None if record is None else record_to_wire(record),
                }
            case Skipped(at=at):
                view = await self.view(at, None)
                return {"sha": view.sha, "files": skipped_files(view)}
            case Resolve(path=path, at=at, session=session):
                return self.resolve(await self.view(at, session), path)
            case Inbound(href=href, at=at, session=session):
                view = await self.view(at, session)
                return {"sha": view.sha, "paths": paths_of(view.inbound, href)}
            case ByEntity(entity=entity, at=at, session=session):
                view = await self.view(at, session)
                return {"sha": view.sha, "paths": paths_of(view.by_entity, entity)}
            case ByFrameKey(key=key, at=at, session=session):
                view = await self.view(at, session)
                return {"sha": view.sha, "paths": paths_of(view.by_frame_key, key)}
            case ByContentHash(hash=content_hash, at=at, session=session):
                view = await self.view(at, session)
                return {"sha": view.sha, "paths": paths_of(view.by_content_hash, content_hash)}
            case Advance(to=to):
                return await self.advance(to)
            case Gate():
                return await self.gate(request)
            case SessionOpen() | SessionApply() | SessionCommit() | SessionRebase():
                return await self.session_call(request)
            case SessionClose() | SessionList():
                return await self.session_call(request)
            case (
                Recall()
                | Reinforce()
                | IndexRebuild()
                | IndexUpdate()
                | IndexStatus()
                | StateExport()
                | StateImport()
                | TracesIndex()
                | TracesSearch()
                | TracesShow()
            ):
                return await self.plane_call(request)
            case VectorsFill(limit=limit):
                return await self.vectors_fill(limit)
        raise MethodNotFound(f"no handler for {type(request).__name__}")

    async def vectors_fill(self, limit: int | None) -> dict[str, Any]:
        """``vectors.fill``: embed, now, what the cache lacks for the followed version."""
        if self.vectors is None:
            raise ModelUnavailable("this daemon runs without an embedder", {"embedder": None})
        return await self.vectors.fill_now(await self.follower.current(), limit)

    # -- versions --------------------------------------------------------------------------

    async def view(self, at: str | None, session: str | None) -> Any:
        """The version a read sees: a session's overlay, the one ``at`` names, or the tip."""
        if session is not None:
            if at is not None:
                raise InvalidParams("pass either at or session, not both")
            registry = self._registry()
            await self.follower.current()
            return await self._in_writer(lambda: registry.view(session))
        return await self.follower.at(at)

    # -- status ----------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        view = await self.follower.current()
        sessions = 0
        if self.sessions is not None:
            try:
                sessions = len(self.sessions.list().sessions)
            except Exception:  # a broken log must not take status down
                log.exception("listing sessions for status failed")
        return {
            "store": str(self.store),
            "ref": self.follower.ref,
            "sha": view.sha,
            "records": record_count(view),
            "skipped": skipped_count(view),
            "load_source": getattr(self.follower, "load_source", "git"),
            "load_ms": round(self.follower.load_ms, 1),
            "advances": self.follower.advances,
            "last_advance_ms": None
            if self.follower.last_advance_ms is None
            else round(self.follower.last_advance_ms, 1),
            "last_advance_by": self.follower.last_advance_by,
            "vectors": self.vectors.status(view)
            if self.vectors is not None
            else {"space": None, "entries": 0, "coverage": 0.0},
            "vector_fill": self.vectors.fill_status() if self.vectors is not None else None,
            "sessions": sessions,
            "index_path": str(self._plane().index_path) if self.plane else None,
            "state_path": str(self._plane().state_path) if self.plane else None,
            "index": self.plane.status() if self.plane else None,
            "snapshot": self.snapshots.status() if self.snapshots is not None else None,
            "socket": None if self.socket_path is None else str(self.socket_path),
            "embedder": self.embedder,
            "embedder_state": embedder_state(
                None if self.vectors is None else self.vectors.embedder, self.embedder
            ),
            "uptime_s": round(self.monotonic() - self.started, 3),
            "pid": os.getpid(),
            "version": daemon_version(),
        }

    # -- search ----------------------------------------------------------------------------

    def _admit(self, filter_: Filter | None) -> Any:
        """The scope every arm ranks within; with no filter, active non-task memories."""
        if filter_ is None:
            if self._default_scope is None:
                self._default_scope = self.head.scope()
            return self._default_scope
        args = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in msgspec.structs.asdict(filter_).items()
            if value is not None
        }
        return self.head.scope(**args)

    async def search(self, request: Search) -> dict[str, Any]:
        if request.plane == "index":
            return await self.index_search(request)
        view = await self.view(request.at, request.session)
        now = request.now or iso_utc(self.clock())
        admit = self._admit(request.filter)
        start = time.perf_counter()
        arm = NO_VECTORS
        if self.vectors is not None:
            arm = await self.vectors.for_search(view, request.query, request.vectors)
        hits = self.head.search_head(
            view,
            request.query,
            limit=request.limit,
            now=now,
            admit=admit,
            vectors=arm.vectors,
            query_vector=arm.query_vector,
        )
        took = (time.perf_counter() - start) * 1000.0
        return {
            "sha": view.sha,
            "hits": [
                {
                    "path": hit.path,
                    "score": hit.score,
                    "title": hit.title,
                    "claim": hit.claim,
                    "arms": list(hit.arms),
                }
                for hit in hits
            ],
            "arms": ["lexical", "recency", "vector"] if arm.ran else ["lexical", "recency"],
            "degraded": not arm.ran,
            "vectors": {"coverage": round(arm.coverage, 4)},
            "took_ms": round(took, 3),
        }

    async def index_search(self, request: Search) -> dict[str, Any]:
        """``plane: "index"``: the SQLite plane's four-arm retrieval (its arm names)."""
        if request.at is not None or request.session is not None:
            raise InvalidParams("the index plane answers at the indexed commit: no at or session")
        plane = self._plane()
        await self.follower.current()  # an advance schedules the index update
        filter_ = None if request.filter is None else msgspec.structs.asdict(request.filter)
        return await plane.search(
            request.query, filter_, request.limit, self._now_epoch(request.now)
        )

    # -- the SQLite plane --------------------------------------------------------------------

    def _plane(self) -> PlaneService:
        if self.plane is None:
            raise MethodNotFound("the SQLite plane is not available in this daemon")
        return self.plane

    def _now_epoch(self, now: str | None) -> float:
        if now is None:
            return self.clock().timestamp()
        try:
            moment = datetime.fromisoformat(now)
        except ValueError:
            raise InvalidParams("now must be an ISO-8601 instant", {"field": "now"}) from None
        if moment.tzinfo is None:  # times on the wire are UTC (contract section 4)
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()

    async def plane_call(self, request: Request) -> Any:
        plane = self._plane()
        match request:
            case Recall(query=query, budget_chars=budget, filter=filter_, now=now):
                await self.follower.current()
                wire = None if filter_ is None else msgspec.structs.asdict(filter_)
                return await plane.recall(query, wire, budget, self._now_epoch(now))
            case Reinforce(paths=paths, signal=signal):
                return await plane.reinforce(paths, signal, self.clock())
            case IndexRebuild(embed=embed, force=force):
                return await plane.index_rebuild(embed, force)
            case IndexUpdate(embed=embed):
                return await plane.index_update(embed)
            case IndexStatus():
                return await plane.index_status()
            case StateExport():
                return await plane.state_export()
            case StateImport():
                return await plane.state_import()
            case TracesIndex(trace_root=root):
                target = None if root is None else Path(root).expanduser()
                return await plane.traces_index(target, self.clock())
            case TracesSearch(query=query, limit=limit):
                return await plane.traces_search(query, limit)
            case TracesShow(session=session):
                return await plane.traces_show(session)
        raise MethodNotFound(f"no plane handler for {type(request).__name__}")

    # -- resolve ---------------------------------------------------------------------------

    def resolve(self, view: Any, path: str) -> dict[str, Any]:
        """Follow an archive move, then supersedes links forward, to the live memory."""
        path = path.lstrip("/")
        chain = [path]
        current = path
        if view.record(current) is None:
            moved = self._archived_copy(view, current)
            if moved is None:
                raise PathNotFound(f"no memory at {path}", {"path": path})
            current = moved
            chain.append(current)
        for _ in range(RESOLVE_MAX_STEPS):
            successor = self._successor(view, current)
            if successor is None or successor in chain:
                break
            current = successor
            chain.append(current)
        return {"sha": view.sha, "path": current, "chain": chain}

    @staticmethod
    def _archived_copy(view: Any, path: str) -> str | None:
        """The newest ``archive/<YYYY>/<path>`` the version holds (a scan: resolve is rare)."""
        records = getattr(view, "records", None)
        if records is None:
            return None
        values = records() if callable(records) else records
        if hasattr(values, "values"):
            values = values.values()
        candidates = [r.path for r in values if r.archived and r.origin_path == path]
        return max(candidates) if candidates else None

    @staticmethod
    def _successor(view: Any, path: str) -> str | None:
        record = view.record(path)
        hrefs = {"/" + path}
        if record is not None and record.origin_path:
            hrefs.add("/" + record.origin_path)
        found: list[tuple[bool, str]] = []
        for href in hrefs:
            for linker in paths_of(view.inbound, href):
                other = view.record(linker)
                if other is None:
                    continue
                if any(link.rel == "supersedes" and link.href in hrefs for link in other.links):
                    found.append((other.archived, linker))
        if not found:
            return None
        found.sort()
        return found[0][1]

    # -- advance and gate --------------------------------------------------------------------

    async def advance(self, to: str | None) -> dict[str, Any]:
        if to is None:
            report = await self.follower.advance("advance")
        else:
            _, report = await self.follower.version_report(to)
        return {
            "sha": report.sha,
            "from": report.from_sha,
            "changed": report.changed,
            "took_ms": round(report.took_ms, 3),
        }

    async def gate(self, request: Gate) -> Any:
        base = await self.follower.at(request.base)
        landed = await self.follower.at(request.landed)
        report = await self._run(
            self._compute,
            lambda: self.head.gate_heads(
                base,
                landed,
                probes=request.probes,
                k=request.k,
                tolerance=request.tolerance,
                seed=request.seed,
            ),
        )
        return report

    # -- sessions --------------------------------------------------------------------------

    def _registry(self) -> Any:
        if self.sessions is None:
            raise MethodNotFound("sessions are not available in this build")
        return self.sessions

    async def session_call(self, request: Request) -> Any:
        registry = self._registry()
        await self.follower.current()
        match request:
            case SessionOpen(id=session_id, base=base):
                return await self._in_writer(lambda: registry.open(session_id, base))
            case SessionApply(session=session_id, ops=ops):
                return await self._in_writer(lambda: registry.apply(session_id, ops))
            case SessionCommit(session=session_id, message=message):
                return await self.session_commit(registry, request, session_id, message)
            case SessionRebase(session=session_id, onto=onto):
                return await self._in_writer(lambda: registry.rebase(session_id, onto))
            case SessionClose(session=session_id):
                return await self._in_writer(lambda: registry.close(session_id))
            case SessionList():
                return await self._in_writer(registry.list)
        raise MethodNotFound(f"no session handler for {type(request).__name__}")

    async def session_commit(
        self, registry: Any, request: SessionCommit, session_id: str, message: str | None
    ) -> Any:
        """Land the session, then bring the follower to the landed commit before answering, so
        the next read on any connection sees it (read-your-writes). Per-step times at DEBUG."""
        provenance = provenance_of(request)
        started = time.perf_counter()
        cpu: list[float] = []

        def commit() -> Any:
            thread_started = time.thread_time()
            try:
                if provenance is None:
                    return registry.commit(session_id, message)
                return registry.commit(session_id, message, provenance=provenance)
            finally:
                cpu.append(time.thread_time() - thread_started)

        result = await self._in_writer(commit)
        landed = time.perf_counter()
        view = await self.follower.current()
        advanced = time.perf_counter()
        if provenance is not None:
            await self._record_wrote(result, view, provenance)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "session.commit %s: %s, commit %.1f ms (%.1f ms CPU), advance %.1f ms, "
                "links %.1f ms",
                session_id,
                getattr(result, "outcome", None),
                (landed - started) * 1e3,
                (cpu[0] if cpu else 0.0) * 1e3,
                (advanced - landed) * 1e3,
                (time.perf_counter() - advanced) * 1e3,
            )
        return result

    async def _record_wrote(self, result: Any, view: Any, provenance: Any) -> None:
        """``memory_session_links``: one ``wrote`` row per memory the landed commit holds."""
        if self.plane is None or getattr(result, "outcome", None) != "committed":
            return
        paths = tuple(p for p in (result.paths or ()) if view.record(p) is not None)
        if not paths:
            return
        from headd_plane.state import iso_ms

        links = WroteLinks(
            session_id=provenance.session_id,
            prompt_id=provenance.prompt_id,
            turn=provenance.turn,
            at=iso_ms(self.clock()),
            paths=paths,
        )
        await self.plane.record_wrote(links)

    async def _in_writer(self, fn: Callable[[], T]) -> T:
        return await self._run(self._writer, fn)

    @staticmethod
    async def _run(executor: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(executor, fn)

    def shutdown(self) -> None:
        self._writer.shutdown(wait=True)
        self._compute.shutdown(wait=True)
        if self.plane is not None:
            self.plane.shutdown()


def provenance_of(request: SessionCommit) -> Any:
    """The commit's transcript provenance, or None; a prompt or turn needs a session id."""
    session_id = check_provenance_value("session_id", request.session_id)
    prompt_id = check_provenance_value("prompt_id", request.prompt_id)
    turn = check_provenance_value("turn", request.turn)
    if session_id is None:
        if prompt_id is not None or turn is not None:
            raise InvalidParams("prompt_id and turn need a session_id", {"field": "session_id"})
        return None
    from headd.store.commit import Provenance

    return Provenance(session_id=session_id, prompt_id=prompt_id, turn=turn)
