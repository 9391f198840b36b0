"""The methods themselves: one ``case`` per typed request, answering in docs/protocol.md's shapes.

``Service.dispatch`` is what ``json_rpc`` calls: it decodes the params into their Struct
(``methods.decode_request``) and matches on the type. Every read first asks the follower for the
version at the ref's tip (which advances when the ref moved), or for the version ``at`` names, or
for a session's overlay on its base, and calls the head's own functions on it: ``search_head``,
``gate_heads``, ``successors.resolve``, the view's index lookups. Slow work (the gate) runs on a
worker thread so the event loop keeps answering; the ``session.*`` methods are
``session_calls.SessionCalls``, the plane's methods ``plane_service.PlaneService``.

The search, the gate and the scope are imported inside the handlers that use them: they are a
tenth of a second of imports that no answer before the first search needs, so they stay off the
way to READY (the daemon imports them in the background just after READY, so a search rarely
waits for them).
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
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from headd_plane.answer import PlaneRequest
from msgspec import Raw

from headd.daemon.follow import RefFollower
from headd.daemon.plane_service import PlaneService
from headd.daemon.session_calls import SessionCalls
from headd.daemon.sleep_calls import SleepCalls
from headd.daemon.snapshots import SnapshotWriter
from headd.daemon.vectors import MIN_COVERAGE, NO_VECTORS, SearchVectors, VectorService
from headd.embed.factory import embedder_state
from headd.errors import (
    InvalidParams,
    MethodNotFound,
    ModelUnavailable,
    PathNotFound,
    WriteConflict,
)
from headd.head.indexes import IndexedView
from headd.head.near import combined_vectors, near_matches
from headd.head.successors import resolve
from headd.limits import bounded
from headd.record import PARA_BUCKETS
from headd.store.results import CommitResult
from headd.wire.answers import (
    AdvanceAnswer,
    ExecAnswer,
    NearDuplicatesAnswer,
    PathsAnswer,
    PlaneAnswer,
    ReadAnswer,
    ResolveAnswer,
    SearchAnswer,
    SearchCoverage,
    SkippedAnswer,
    SkippedFile,
    StatusAnswer,
    VectorsFillAnswer,
    VectorsStatus,
    wire_record_or_none,
)
from headd.wire.answers import SearchHit as WireHit
from headd.wire.browse import (
    CensusAnswer,
    CensusRequest,
    EntityActivityRequest,
    ListRequest,
    NeighborsAnswer,
    NeighborsRequest,
    SourceAnswer,
    SourceRequest,
    StateUsageRequest,
    TasksRequest,
    TracesLinksRequest,
)
from headd.wire.doctor import DoctorAnswer, DoctorRequest, StatePrune
from headd.wire.filter import Filter
from headd.wire.methods import (
    Advance,
    ByContentHash,
    ByEntity,
    ByFrameKey,
    Exec,
    Gate,
    Inbound,
    IndexRebuild,
    IndexStatus,
    IndexUpdate,
    NearDuplicates,
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
    SleepDiscard,
    SleepMerge,
    SleepPlan,
    SleepResume,
    SleepReview,
    SleepRun,
    SleepStatus,
    StateExport,
    StateImport,
    Status,
    Sync,
    TracesIndex,
    TracesSearch,
    TracesShow,
    VectorsFill,
    decode_request,
)
from headd.wire.publish import PublishAnswer, PublishRequest
from headd.wire.remote_answers import SyncAnswer
from headd.wire.status_parts import MemoryFigures, PlaneFiles, VectorsFootprint

if TYPE_CHECKING:
    from headd_plane.recall import RankedPool

    from headd.codemode.service import ExecService
    from headd.daemon.remote_follower import RemoteFollower
    from headd.head.gate import HeadGateReport
    from headd.head.scope import Scope
    from headd.head.search import SearchHit
    from headd.store.manager import SessionManager

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long the event loop waits, at most, for an unseen query's model call to begin before it
#: ranks the hybrid's lexical arm (:mod:`headd.embed.run_signal`): the worker usually gets
#: there in a tenth of a millisecond; a busy model (its run slots taken by the fill) ends the
#: wait at this bound, and the arm is ranked anyway.
MODEL_START_WAIT_S = 0.002


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


def _worktree_dirty(repo: Any) -> bool | None:
    """Uncommitted edits to tracked files in the checkout (new and ignored files aside); None
    for a bare store, which has no checkout."""
    return None if repo.is_bare else bool(_dirty_paths(repo))


def _dirty_paths(repo: Any) -> list[str]:
    """The checkout's paths with uncommitted edits to tracked files (empty for a bare store)."""
    import pygit2

    if repo.is_bare:
        return []
    quiet = pygit2.GIT_STATUS_IGNORED | pygit2.GIT_STATUS_WT_NEW
    return sorted(path for path, flags in repo.status().items() if flags & ~quiet)


def _file_bytes(path: Path) -> int | msgspec.UnsetType:
    """A file's size; UNSET (the key left out) for one that is absent or cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return msgspec.UNSET


def _landed_paths(result: object) -> bool:
    """Whether a ``session.commit`` answer moved the branch (a commit with paths)."""
    return isinstance(result, CommitResult) and result.outcome == "committed" and bool(result.paths)


@dataclass
class Service:
    """Everything a request may touch, and the handlers over it."""

    store: Path
    follower: RefFollower
    sessions: SessionManager | None = None
    vectors: VectorService | None = None
    plane: PlaneService | None = None
    snapshots: SnapshotWriter | None = None
    #: Following a git remote (``--remote``), when the daemon does.
    remote: RemoteFollower | None = None
    socket_path: Path | None = None
    embedder: str = "off"
    clock: Callable[[], datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    started: float = field(default_factory=time.monotonic)
    _default_scope: Scope | None = None
    _compute: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="headd-gate")
    )
    _session_calls: SessionCalls = field(init=False)
    #: Code-mode (``exec``), made on its first script.
    _exec: ExecService | None = None
    _sleep_calls: SleepCalls = field(init=False)

    def __post_init__(self) -> None:
        self._session_calls = SessionCalls(self.sessions, self.follower, self.plane, self.clock)
        self._sleep_calls = SleepCalls(
            self.store, self.follower, self.sessions, self.clock, self.plane, self.vectors
        )

    async def dispatch(self, method: str, params: Raw | None) -> object:
        return await self.handle(decode_request(method, params))

    async def handle(self, request: Request) -> object:
        match request:
            case Status(memory=accounting):
                return await self.status(accounting)
            case Search():
                return await self.search(request)
            case Read(path=path, at=at, session=session):
                view = await self.view(at, session)
                return ReadAnswer(view.sha, wire_record_or_none(view.record(path)))
            case Skipped(at=at):
                version = await self.follower.at(at)
                files = [SkippedFile(s.path, s.reason) for s in version.skipped]
                return SkippedAnswer(version.sha, sorted(files, key=lambda f: f.path))
            case Resolve(path=path, at=at, session=session):
                view = await self.view(at, session)
                found = resolve(view, path)
                return ResolveAnswer(view.sha, found.path, list(found.chain))
            case Inbound(href=href, at=at, session=session):
                view = await self.view(at, session)
                return PathsAnswer(view.sha, view.inbound(href))
            case ByEntity(entity=entity, at=at, session=session):
                view = await self.view(at, session)
                return PathsAnswer(view.sha, view.by_entity(entity))
            case ByFrameKey(key=key, at=at, session=session):
                view = await self.view(at, session)
                return PathsAnswer(view.sha, view.by_frame_key(key))
            case NearDuplicates(texts=texts, titles=titles, floor=floor, k=k):
                return await self.near_duplicates(texts, titles, floor, k)
            case ByContentHash(hash=content_hash, at=at, session=session):
                view = await self.view(at, session)
                held = view.by_content_hash(content_hash)
                return PathsAnswer(view.sha, [] if held is None else [held])
            case Advance(to=to):
                return await self.advance(to)
            case Gate():
                return await self.gate(request)
            case SessionCommit():
                result = await self._session_calls.call(request)
                if self.remote is not None and _landed_paths(result):
                    self.remote.poke()
                return result
            case SessionOpen() | SessionApply() | SessionRebase() | SessionClose() | SessionList():
                return await self._session_calls.call(request)
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
            case Sync(resolve=target):
                return await self.sync(target)
            case ListRequest(at=at, session=session):
                from headd.head.browse import list_records

                return list_records(await self.view(at, session), request)
            case EntityActivityRequest(at=at, session=session):
                from headd.head.browse import entity_activity

                return entity_activity(await self.view(at, session), request)
            case TasksRequest(at=at, session=session):
                from headd.head.browse import tasks

                return tasks(await self.view(at, session), request)
            case DoctorRequest(today=today):
                return await self.doctor(today)
            case StatePrune(paths=paths):
                return await self._plane().state_prune(paths)
            case PublishRequest():
                return await self.publish()
            case CensusRequest(at=at, session=session):
                return await self.census(at, session)
            case NeighborsRequest():
                return await self.neighbors(request)
            case SourceRequest(path=path, at=at, session=session):
                return await self.source(path, at, session)
            case TracesLinksRequest(path=path):
                return await self._plane().traces_links(path)
            case StateUsageRequest(path=path):
                return await self._plane().state_usage(path)
            case VectorsFill(limit=limit):
                return await self.vectors_fill(limit)
            case Exec(at=at):
                return await self.exec(request, at)
            case SleepStatus():
                return self._sleep_calls.status()
            case (
                SleepPlan()
                | SleepRun()
                | SleepReview()
                | SleepMerge()
                | SleepResume()
                | SleepDiscard()
            ):
                result = await self._sleep_calls.call(request)
                if self.remote is not None and getattr(result, "merged", False):
                    self.remote.poke()
                return result
        raise MethodNotFound(f"no handler for {type(request).__name__}")

    async def near_duplicates(
        self, texts: list[str], titles: list[str] | None, floor: float, k: int
    ) -> NearDuplicatesAnswer:
        """``near_duplicates``: the texts embedded as documents, each matched against the
        followed version's vectors (``VersionMatrix.ranked``) and the texts before it."""
        view = await self.follower.current()
        vectors = self.vectors
        unchecked = NearDuplicatesAnswer(view.sha, True, [[] for _ in texts])
        if vectors is None or vectors.embedder is None or vectors.cache is None:
            return unchecked
        if not texts or vectors.coverage(view) < MIN_COVERAGE:
            return unchecked if texts else NearDuplicatesAnswer(view.sha, False, [])
        embedder, cache = vectors.embedder, vectors.cache
        loop = asyncio.get_running_loop()
        if titles is not None and len(titles) != len(texts):
            raise InvalidParams("near_duplicates: one title per text", {"texts": len(texts)})
        try:
            embedded = await loop.run_in_executor(
                None, combined_vectors, embedder, list(texts), titles
            )
        except Exception as exc:  # a model failure leaves the texts unchecked, never refused
            log.warning("near-duplicate embed failed: %s", exc)
            return unchecked
        return NearDuplicatesAnswer(
            view.sha, False, near_matches(view, vectors.matrix_for(view, cache), embedded, floor, k)
        )

    async def vectors_fill(self, limit: int | None) -> VectorsFillAnswer:
        """``vectors.fill``: embed, now, what the cache lacks for the followed version."""
        if self.vectors is None:
            raise ModelUnavailable("this daemon runs without an embedder", {"embedder": None})
        return await self.vectors.fill_now(await self.follower.current(), limit)

    async def exec(self, request: Exec, at: str | None) -> ExecAnswer:
        """``exec``: the script over commit ``at`` (the tip when None), in a worker."""
        from headd.codemode.service import ExecService, check_script

        check_script(request)
        sha = self.follower.resolve(at) if at is not None else (await self.follower.current()).sha
        if sha is None:
            raise InvalidParams("the store has no commit to run a script over")
        if self._exec is None:
            self._exec = ExecService(self.store)
        return await self._exec.exec(request, sha)

    async def close_exec(self) -> None:
        """Stop code-mode's spare worker and any script still running."""
        if self._exec is not None:
            await self._exec.close()

    # -- versions --------------------------------------------------------------------------

    async def view(self, at: str | None, session: str | None) -> IndexedView:
        """The version a read sees: a session's overlay, the one ``at`` names, or the tip."""
        if session is not None:
            if at is not None:
                raise InvalidParams("pass either at or session, not both")
            return await self._session_calls.view(session)
        return await self.follower.at(at)

    # -- browsing ----------------------------------------------------------------------------

    async def census(self, at: str | None, session: str | None) -> CensusAnswer:
        """``census``: the version's counts, and whether the checkout has uncommitted edits."""
        from headd.head.browse import census

        view = await self.view(at, session)
        await self._session_calls.index_written()
        dirty = await self.follower.read_git(_worktree_dirty)
        return census(view, dirty=dirty, vector_coverage_floor=MIN_COVERAGE)

    async def doctor(self, today: str | None) -> DoctorAnswer:
        """``doctor``: the version's findings (``headd.head.doctor``), and what the daemon alone
        knows: the checkout's dirty paths, the plane's indexed commit and orphan state rows."""
        from headd.head.doctor import findings, healthy

        version = await self.follower.current()
        moment = self.clock()
        found = findings(
            version,
            today=today or moment.strftime("%Y-%m-%d"),
            year=moment.year,
            skipped=[s.path for s in version.skipped if s.path.split("/", 1)[0] in PARA_BUCKETS],
        )
        await self._session_calls.index_written()
        dirty = await self.follower.read_git(_dirty_paths)
        orphans: list[str] = []
        indexed: str | None = None
        if self.plane is not None:
            orphans = [p for p in await self.plane.state_access_paths() if p not in version]
            indexed = self.plane.status().indexed_sha
        fresh = self.plane is None or indexed == version.sha
        coverage = 0.0
        space: str | None = None
        entries = 0
        if self.vectors is not None:
            vectors = self.vectors.status(version)
            coverage, space, entries = vectors.coverage, vectors.space, vectors.entries
        # low only where an embedder could fill it (memhtml: none configured is not a finding)
        low = self.vectors is not None and self.embedder != "off" and coverage < MIN_COVERAGE
        return DoctorAnswer(
            root=str(self.store),
            healthy=healthy(found, orphans=len(orphans), fresh=fresh, coverage_low=low),
            head_sha=version.sha,
            findings=found,
            orphan_access_rows=orphans,
            stuck_sleep_runs=[],
            index_fresh=fresh,
            index_head_sha=indexed,
            vector_coverage=coverage,
            vector_coverage_floor=MIN_COVERAGE,
            vector_coverage_low=low,
            configured_embed_model=space,
            stored_embed_model=space,
            embed_model_matches=space is not None,
            chunks=version.size,
            embeddings=entries,
            vector_coverage_remedy="headctl vectors fill" if low else None,
            dirty=dirty,
        )

    async def publish(self) -> PublishAnswer:
        """``publish``: the listings and the sitemap of the tip's records, landed as one session
        (``SessionManager.publish``); the head then follows the commit like any other."""
        from headd.memfile.publish import Row, artifacts

        def render(view: object) -> dict[str, str]:
            if not isinstance(view, IndexedView):
                raise TypeError(f"a version is an IndexedView, not {type(view).__name__}")
            return artifacts(
                Row(r.path, r.title, r.claim, r.memory_type, r.updated_at or r.created_at or "")
                for r in view.records()
            )

        count, paths, result = await self._session_calls.publish(render)
        if result.outcome != "committed":
            raise WriteConflict(
                f"publish did not land ({result.outcome}); nothing was written",
                {"outcome": result.outcome, "violations": msgspec.to_builtins(result.violations)},
            )
        if self.remote is not None and paths:
            self.remote.poke()
        return PublishAnswer(
            root=str(self.store),
            artifacts=count,
            written=len(paths),
            paths=list(paths),
            commit_sha=result.sha if paths else None,
        )

    async def neighbors(self, request: NeighborsRequest) -> NeighborsAnswer:
        from headd.head.browse import neighbours

        found = neighbours(await self.view(request.at, request.session), request)
        if found is None:
            raise PathNotFound(f"no memory at {request.path}", {"path": request.path})
        return found

    async def source(self, path: str, at: str | None, session: str | None) -> SourceAnswer:
        """``source``: the file text of the record at ``path`` (None when there is none)."""
        from headd.store.git_io import blob_text

        view = await self.view(at, session)
        record = view.record(path)
        if record is None:
            return SourceAnswer(sha=view.sha, path=path, html=None)
        html = view.pending_texts.get(record.blob_sha)
        if html is None:
            blob = record.blob_sha
            html = await self.follower.read_git(lambda repo: blob_text(repo, blob))
        return SourceAnswer(sha=view.sha, path=path, html=html)

    # -- status ----------------------------------------------------------------------------

    async def sync(self, resolve: str | None) -> SyncAnswer:
        """``sync``: one round with the remote now, or mark a conflict resolved."""
        if self.remote is None:
            raise InvalidParams("this daemon follows no remote (start it with --remote NAME)")
        if resolve is not None:
            resolved = await self.remote.resolve(resolve)
            if not resolved:
                raise PathNotFound(f"no open conflict {resolve}", {"conflict": resolve})
            return SyncAnswer(resolved=resolved, remote=self.remote.status())
        report = await self.remote.round_now()
        return SyncAnswer(round=report, remote=self.remote.status())

    async def status(self, accounting: bool = False) -> StatusAnswer:
        view = await self.follower.current()
        return StatusAnswer(
            store=str(self.store),
            ref=self.follower.ref,
            sha=view.sha,
            records=view.size,
            skipped=len(view.skipped),
            load_source=self.follower.load_source,
            load_ms=round(self.follower.load_ms, 1),
            advances=self.follower.advances,
            last_advance_ms=None
            if self.follower.last_advance_ms is None
            else round(self.follower.last_advance_ms, 1),
            last_advance_by=self.follower.last_advance_by,
            vectors=self.vectors.status(view)
            if self.vectors is not None
            else VectorsStatus(space=None, entries=0, coverage=0.0),
            vector_fill=self.vectors.fill_status() if self.vectors is not None else None,
            sessions=self._session_calls.count(),
            index_path=str(self._plane().index_path) if self.plane else None,
            state_path=str(self._plane().state_path) if self.plane else None,
            index=self.plane.status() if self.plane else None,
            snapshot=self.snapshots.status() if self.snapshots is not None else None,
            memory=self.memory(view) if accounting else self.process_memory(),
            socket=None if self.socket_path is None else str(self.socket_path),
            embedder=self.embedder,
            embedder_state=embedder_state(
                None if self.vectors is None else self.vectors.embedder, self.embedder
            ),
            remote=None if self.remote is None else self.remote.status(),
            last_sleep=self._sleep_calls.last_sleep(),
            uptime_s=round(self.monotonic() - self.started, 3),
            pid=os.getpid(),
            version=daemon_version(),
        )

    @staticmethod
    def process_memory() -> MemoryFigures:
        """``status.memory`` unasked: the process's resident and peak bytes (``/proc``)."""
        from headd.head.footprint import process_memory

        held = process_memory()
        return MemoryFigures(held["rss_bytes"], held["peak_bytes"])

    def memory(self, view: IndexedView) -> MemoryFigures:
        """``status.memory``: the process, the followed version's records and postings, the
        vectors, the plane's files; estimates from known sizes (``headd.head.footprint``)."""
        from headd.head.footprint import array_bytes, process_memory, version_footprint

        held = process_memory()
        records, postings = version_footprint(view.indexes) or (None, None)
        cache = None if self.vectors is None else self.vectors.cache
        matrix = None if self.vectors is None else self.vectors.held_matrix
        # the cache's arrays (one unit row per key, its scale) and the version's matrix
        vectors = VectorsFootprint(0 if cache is None else len(cache), array_bytes(cache, matrix))
        plane = PlaneFiles()
        if self.plane is not None:
            index = self._plane().index_path
            plane = PlaneFiles(_file_bytes(index), _file_bytes(Path(f"{index}-wal")))
        return MemoryFigures(
            held["rss_bytes"],
            held["peak_bytes"],
            records=records,
            postings=postings,
            vectors=vectors,
            plane=plane,
        )

    # -- search ----------------------------------------------------------------------------

    def _admit(self, filter_: Filter | None) -> Scope:
        """The scope every arm ranks within; with no filter, active non-task memories."""
        from headd.head.scope import Scope

        if filter_ is None:
            if self._default_scope is None:
                self._default_scope = Scope()
            return self._default_scope
        return Scope.from_filter(filter_)

    async def search(self, request: Search) -> SearchAnswer | PlaneAnswer:
        if request.plane == "index":
            return await self.index_search(request)
        view = await self.view(request.at, request.session)
        why: dict[str, dict[str, float]] | None = {} if request.explain else None
        start = time.perf_counter()
        hits, arm = await self._rank(
            view,
            request.query,
            request.filter,
            limit=request.limit,
            now=request.now,
            want_vectors=request.vectors,
            mode=request.mode,
            explain=why,
        )
        covered: list[float] | None = None
        if request.relevance_floor is not None:
            from headd.head.relevance import relevant_hits

            hits, covered = relevant_hits(view, request.query, hits, request.relevance_floor)
        took = (time.perf_counter() - start) * 1000.0
        out_hits = [
            WireHit(hit.path, hit.score, bounded(hit.title), bounded(hit.claim), list(hit.arms))
            for hit in hits
        ]
        if why is not None:
            for out in out_hits:
                out.why = why.get(out.path, {})
        if covered is not None:
            for out, share in zip(out_hits, covered, strict=True):
                out.coverage = round(share, 4)
        if request.records:
            for out in out_hits:
                out.record = wire_record_or_none(view.record(out.path))
        return SearchAnswer(
            sha=view.sha,
            hits=out_hits,
            arms=["lexical", "recency", "vector"] if arm.ran else ["lexical", "recency"],
            degraded=not arm.ran,
            vectors=SearchCoverage(round(arm.coverage, 4)),
            took_ms=round(took, 3),
        )

    async def recall_pool(self, query: str, filter_: Filter | None, now: str | None) -> RankedPool:
        """Recall's candidates as the head's search ranks them, over the head's vectors (so
        one fill serves search and recall; the plane folds them into its pack)."""
        from headd_plane.recall import RECALL_POOL, RankedPool

        from headd.head.search import HYBRID

        view = await self.view(None, None)
        hits, arm = await self._rank(
            view, query, filter_, limit=RECALL_POOL, now=now, want_vectors=True, mode=HYBRID
        )
        return RankedPool([hit.path for hit in hits], not arm.ran, round(arm.coverage, 4))

    async def _rank(
        self,
        view: IndexedView,
        query: str,
        filter_: Filter | None,
        *,
        limit: int,
        now: str | None,
        want_vectors: bool,
        mode: str,
        explain: dict[str, dict[str, float]] | None = None,
    ) -> tuple[list[SearchHit], SearchVectors]:
        """The head's ranking of ``query`` over ``view``, and the vector arm it ran with: the one
        path ``search`` and recall's pool share, so the two cannot admit or rank differently."""
        from headd.head.search import HYBRID, HybridLexicalArm, hybrid_lexical_arm, search_head

        admit = self._admit(filter_)
        arm = NO_VECTORS
        ranked: HybridLexicalArm | None = None
        if self.vectors is not None:
            if want_vectors and mode == HYBRID:
                started = self.vectors.begin(view, query)
                if started is not None:
                    # The model runs without the GIL: rank the lexical arm meanwhile, once the
                    # worker is inside the model call (a bounded wait, the GIL released).
                    started.wait(MODEL_START_WAIT_S)
                    ranked = hybrid_lexical_arm(view, query, limit=limit, admit=admit)
            arm = await self.vectors.for_search(view, query, want_vectors)
        hits = search_head(
            view,
            query,
            limit=limit,
            now=now or iso_utc(self.clock()),
            admit=admit,
            vectors=arm.vectors,
            query_vector=arm.query_vector,
            mode=mode,
            explain=explain,
            hybrid_lexical=ranked,
        )
        return hits, arm

    async def index_search(self, request: Search) -> PlaneAnswer:
        """``plane: "index"``: the SQLite plane's four-arm retrieval (its arm names)."""
        if request.at is not None or request.session is not None:
            raise InvalidParams("the index plane answers at the indexed commit: no at or session")
        plane = self._plane()
        await self.follower.current()  # an advance schedules the index update
        return await plane.answer(request, self._moment(request.now))

    # -- the SQLite plane --------------------------------------------------------------------

    def _plane(self) -> PlaneService:
        if self.plane is None:
            raise MethodNotFound("the SQLite plane is not available in this daemon")
        return self.plane

    def _moment(self, now: str | None) -> datetime:
        """The request's ``now`` (UTC when it names no zone), or the clock's."""
        if now is None:
            return self.clock()
        try:
            moment = datetime.fromisoformat(now)
        except ValueError:
            raise InvalidParams("now must be an ISO-8601 instant", {"field": "now"}) from None
        if moment.tzinfo is None:  # times on the wire are UTC (docs/protocol.md)
            moment = moment.replace(tzinfo=UTC)
        return moment

    async def plane_call(self, request: PlaneRequest) -> PlaneAnswer:
        """A plane method, answered by the plane's one dispatcher (``headd_plane.answer``) at the
        request's ``now`` or the clock's; recall folds the head's ranking of its query in."""
        plane = self._plane()
        ranked = None
        match request:
            case Recall(query=query, filter=filter_, now=now):
                # Read-your-writes: the index is brought to the branch tip first (bounded).
                await plane.catch_up((await self.view(None, None)).sha)
                ranked = await self.recall_pool(query, filter_, now)
                return await plane.answer(request, self._moment(now), ranked)
        return await plane.answer(request, self.clock(), ranked)

    # -- advance and gate --------------------------------------------------------------------

    async def advance(self, to: str | None) -> AdvanceAnswer:
        if to is None:
            report = await self.follower.advance("advance")
        else:
            _, report = await self.follower.version_report(to)
        return AdvanceAnswer(report.sha, report.from_sha, report.changed, round(report.took_ms, 3))

    async def gate(self, request: Gate) -> HeadGateReport:
        from headd.head.gate import gate_heads

        base = await self.follower.at(request.base)
        landed = await self.follower.at(request.landed)
        report = await self._run(
            self._compute,
            lambda: gate_heads(
                base,
                landed,
                probes=request.probes,
                k=request.k,
                tolerance=request.tolerance,
                seed=request.seed,
            ),
        )
        return report

    @staticmethod
    async def _run(executor: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(executor, fn)

    def shutdown(self) -> None:
        self._session_calls.shutdown()
        self._sleep_calls.shutdown()
        self._compute.shutdown(wait=True)
        if self.plane is not None:
            self.plane.shutdown()
