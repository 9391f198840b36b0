"""Typed calls: one function per method, built from the wire's own request and answer types.

``search("orders", limit=5)`` is a :class:`Call` holding the method name, the params of the
``headd.wire.methods.Search`` Struct it built (so a wrong param fails here, before the socket) and
the answer type ``SearchAnswer`` the result decodes into. Both clients run a call the same way
(``Client.run``, ``AsyncClient.run``) and expose each function as a method of the same name
(:func:`typed_method`), so ``client.search(query, limit=5)`` returns a ``SearchAnswer`` and
``client.call("search", query=...)`` stays for scripts. Nothing here touches a socket.

The session results live with the store (``headd.store.results``), whose import loads git, so
those answer types are imported inside their functions, on first use.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Concatenate, Generic, Literal, ParamSpec, Protocol, TypeVar

import msgspec

from headd.errors import ProtocolViolation
from headd.ops import Op
from headd.wire import browse, methods
from headd.wire.answers import (
    AdvanceAnswer,
    NearDuplicatesAnswer,
    PathsAnswer,
    ReadAnswer,
    ReinforceAnswer,
    ResolveAnswer,
    SearchAnswer,
    SkippedAnswer,
    StatusAnswer,
    VectorsFillAnswer,
)
from headd.wire.doctor import DoctorAnswer, DoctorRequest, StatePrune, StatePruneAnswer
from headd.wire.filter import Filter
from headd.wire.plane_answers import (
    IndexSearchAnswer,
    IndexStatusAnswer,
    RecallAnswer,
    TracesSearchAnswer,
    TracesShowAnswer,
)
from headd.wire.publish import PublishAnswer, PublishRequest
from headd_client.json_types import JsonObject

if TYPE_CHECKING:
    from headd.store.results import (
        ApplyResult,
        CloseResult,
        CommitResult,
        ListResult,
        OpenResult,
        RebaseResult,
    )
    from headd.wire.remote_answers import SyncAnswer

T = TypeVar("T")
#: A call's answer type: covariant, so a call answering a ``RecallAnswer`` is a ``Call[object]``
#: to code that only passes calls on (``headctl``'s command table).
A = TypeVar("A", covariant=True)
P = ParamSpec("P")
F = TypeVar("F", bound=Callable[..., object])

_NAMES: dict[type, str] = {cls: name for name, cls in methods.METHODS.items()}


class Call(Generic[A]):
    """One method, its params as the wire carries them, and the type its answer decodes into."""

    __slots__ = ("answer", "method", "params")

    def __init__(self, request: msgspec.Struct, answer: type[A]) -> None:
        self.method = _NAMES[type(request)]
        #: Only the params that differ from their defaults, as a hand-written call sends them.
        self.params: JsonObject = {
            name: msgspec.to_builtins(value)
            for name, value in msgspec.structs.asdict(request).items()
            if value != _default(type(request), name)
        }
        self.answer = answer

    def decode(self, result: object) -> A:
        """``result`` (the answer's decoded JSON) as the call's answer type; an answer that is
        not one is a ProtocolViolation, as an undecodable line is."""
        try:
            return msgspec.convert(result, self.answer)
        except msgspec.ValidationError as exc:
            raise ProtocolViolation(f"{self.method} answered another shape: {exc}") from None


class SyncRunner(Protocol):
    """A client whose ``run`` answers at once (``Client``, the MCP bridge's ``DaemonLink``)."""

    def run(self, call: Call[T], /) -> T: ...


class AsyncRunner(Protocol):
    """A client whose ``run`` is a coroutine (``AsyncClient``)."""

    def run(self, call: Call[T], /) -> Awaitable[T]: ...


def _named_like(method: F, build: Callable[..., object]) -> F:
    """``method`` with ``build``'s name, docstring and signature (``self`` first), so ``help``
    and ``inspect`` show a client's typed call as the function it runs."""
    signature = inspect.signature(build)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__name__ = method.__qualname__ = build.__name__
    method.__doc__ = build.__doc__
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *signature.parameters.values()]
    )
    return method


def sync_method(build: Callable[P, Call[T]]) -> Callable[Concatenate[SyncRunner, P], T]:
    """``build`` as a method of a client whose ``run`` answers at once (``Client``)."""

    def method(self: SyncRunner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        answer: T = self.run(build(*args, **kwargs))
        return answer

    return _named_like(method, build)


def async_method(
    build: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncRunner, P], Awaitable[T]]:
    """``build`` as a method of a client whose ``run`` is a coroutine (``AsyncClient``)."""

    async def method(self: AsyncRunner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        answer: T = await self.run(build(*args, **kwargs))
        return answer

    return _named_like(method, build)


#: The typed calls every client offers as methods of the same name.
TYPED_CALLS = (
    "status",
    "search",
    "read",
    "skipped",
    "resolve",
    "inbound",
    "by_entity",
    "by_frame_key",
    "by_content_hash",
    "advance",
    "vectors_fill",
    "session_open",
    "session_apply",
    "session_commit",
    "session_rebase",
    "session_close",
    "session_list",
    "recall",
    "index_search",
    "index_status",
    "traces_search",
    "traces_show",
    "sync",
)


def _default(cls: type[msgspec.Struct], name: str) -> object:
    return _defaults(cls)[name]


@functools.cache
def _defaults(cls: type[msgspec.Struct]) -> dict[str, object]:
    """Each field's default, read once per class: ``msgspec.structs.fields`` evaluates the
    class's annotations on every call, milliseconds a call for a request of a dozen fields."""
    return {field.name: field.default for field in msgspec.structs.fields(cls)}


# -- the head's reads ----------------------------------------------------------------------


def status(*, memory: bool = False) -> Call[StatusAnswer]:
    return Call(methods.Status(memory=memory), StatusAnswer)


def search(
    query: str,
    *,
    limit: int = 10,
    at: str | None = None,
    session: str | None = None,
    now: str | None = None,
    filter: Filter | None = None,
    vectors: bool = True,
    records: bool = False,
    mode: Literal["hybrid", "seed-exact"] = "hybrid",
    explain: bool = False,
    relevance_floor: float | None = None,
) -> Call[SearchAnswer]:
    """The head's search (the SQLite plane's, ``plane="index"``, is :func:`index_search`)."""
    request = methods.Search(
        query=query,
        limit=limit,
        at=at,
        session=session,
        now=now,
        filter=filter,
        vectors=vectors,
        records=records,
        mode=mode,
        explain=explain,
        relevance_floor=relevance_floor,
    )
    return Call(request, SearchAnswer)


def read(path: str, *, at: str | None = None, session: str | None = None) -> Call[ReadAnswer]:
    return Call(methods.Read(path=path, at=at, session=session), ReadAnswer)


def skipped(*, at: str | None = None) -> Call[SkippedAnswer]:
    return Call(methods.Skipped(at=at), SkippedAnswer)


def resolve(path: str, *, at: str | None = None, session: str | None = None) -> Call[ResolveAnswer]:
    return Call(methods.Resolve(path=path, at=at, session=session), ResolveAnswer)


def inbound(href: str, *, at: str | None = None, session: str | None = None) -> Call[PathsAnswer]:
    return Call(methods.Inbound(href=href, at=at, session=session), PathsAnswer)


def by_entity(
    entity: str, *, at: str | None = None, session: str | None = None
) -> Call[PathsAnswer]:
    return Call(methods.ByEntity(entity=entity, at=at, session=session), PathsAnswer)


def by_frame_key(
    key: str, *, at: str | None = None, session: str | None = None
) -> Call[PathsAnswer]:
    return Call(methods.ByFrameKey(key=key, at=at, session=session), PathsAnswer)


def by_content_hash(
    content_hash: str, *, at: str | None = None, session: str | None = None
) -> Call[PathsAnswer]:
    return Call(methods.ByContentHash(hash=content_hash, at=at, session=session), PathsAnswer)


def advance(*, to: str | None = None) -> Call[AdvanceAnswer]:
    return Call(methods.Advance(to=to), AdvanceAnswer)


def vectors_fill(*, limit: int | None = None) -> Call[VectorsFillAnswer]:
    return Call(methods.VectorsFill(limit=limit), VectorsFillAnswer)


# -- sessions ------------------------------------------------------------------------------


def session_open(*, id: str | None = None, base: str | None = None) -> Call[OpenResult]:
    from headd.store.results import OpenResult

    return Call(methods.SessionOpen(id=id, base=base), OpenResult)


def session_apply(session: str, ops: list[Op]) -> Call[ApplyResult]:
    from headd.store.results import ApplyResult

    return Call(methods.SessionApply(session=session, ops=ops), ApplyResult)


def session_commit(
    session: str,
    *,
    message: str | None = None,
    session_id: str | None = None,
    prompt_id: str | None = None,
    turn: str | None = None,
    rebase: Literal["auto", "never"] = "auto",
) -> Call[CommitResult]:
    from headd.store.results import CommitResult

    request = methods.SessionCommit(
        session=session,
        message=message,
        session_id=session_id,
        prompt_id=prompt_id,
        turn=turn,
        rebase=rebase,
    )
    return Call(request, CommitResult)


def session_rebase(session: str, *, onto: str | None = None) -> Call[RebaseResult]:
    from headd.store.results import RebaseResult

    return Call(methods.SessionRebase(session=session, onto=onto), RebaseResult)


def session_close(session: str) -> Call[CloseResult]:
    from headd.store.results import CloseResult

    return Call(methods.SessionClose(session=session), CloseResult)


def session_list() -> Call[ListResult]:
    from headd.store.results import ListResult

    return Call(methods.SessionList(), ListResult)


# -- browsing a version (the bridge's and memhtml's command line's reads) -----------------------


def listing(request: browse.ListRequest) -> Call[browse.ListAnswer]:
    """``list``: one page of memories in path order (memhtml's ``memory_list``)."""
    return Call(request, browse.ListAnswer)


def census(*, at: str | None = None, session: str | None = None) -> Call[browse.CensusAnswer]:
    return Call(browse.CensusRequest(at=at, session=session), browse.CensusAnswer)


def neighbors(request: browse.NeighborsRequest) -> Call[browse.NeighborsAnswer]:
    return Call(request, browse.NeighborsAnswer)


def traces_links(path: str) -> Call[browse.TracesLinksAnswer]:
    return Call(browse.TracesLinksRequest(path=path), browse.TracesLinksAnswer)


def state_usage(path: str) -> Call[browse.StateUsageAnswer]:
    return Call(browse.StateUsageRequest(path=path), browse.StateUsageAnswer)


# -- memhtml's command line: tasks, entities, the store's health, publishing ---------------------


def tasks(request: browse.TasksRequest) -> Call[browse.TasksAnswer]:
    """``tasks``: the task working set in path order (``headctl task list``)."""
    return Call(request, browse.TasksAnswer)


def entity_activity(request: browse.EntityActivityRequest) -> Call[browse.EntityActivityAnswer]:
    """``entity.activity``: every entity with its file count, newest first."""
    return Call(request, browse.EntityActivityAnswer)


def doctor(*, today: str | None = None) -> Call[DoctorAnswer]:
    """``doctor``: the store's findings at the tip (``headctl doctor``)."""
    return Call(DoctorRequest(today=today), DoctorAnswer)


def state_prune(paths: list[str]) -> Call[StatePruneAnswer]:
    """``state.prune``: delete the state rows of ``paths`` (the orphans ``doctor`` found)."""
    return Call(StatePrune(paths=paths), StatePruneAnswer)


def publish() -> Call[PublishAnswer]:
    """``publish``: every listing and the sitemap regenerated and committed."""
    return Call(PublishRequest(), PublishAnswer)


# -- the SQLite plane's reads and the remote -----------------------------------------------


def recall(
    query: str,
    *,
    budget_chars: int | None = None,
    filter: Filter | None = None,
    now: str | None = None,
) -> Call[RecallAnswer]:
    """The plane's disclosure pack for ``query`` (the daemon folds in its head's ranking)."""
    request = methods.Recall(query=query, budget_chars=budget_chars, filter=filter, now=now)
    return Call(request, RecallAnswer)


def index_search(
    query: str, *, limit: int = 10, filter: Filter | None = None, now: str | None = None
) -> Call[IndexSearchAnswer]:
    """``search`` with ``plane: "index"``: the SQLite plane's four-arm retrieval."""
    request = methods.Search(query=query, limit=limit, filter=filter, now=now, plane="index")
    return Call(request, IndexSearchAnswer)


def index_status() -> Call[IndexStatusAnswer]:
    return Call(methods.IndexStatus(), IndexStatusAnswer)


def traces_search(query: str = "", *, limit: int = 10) -> Call[TracesSearchAnswer]:
    return Call(methods.TracesSearch(query=query, limit=limit), TracesSearchAnswer)


def traces_show(session: str) -> Call[TracesShowAnswer]:
    return Call(methods.TracesShow(session=session), TracesShowAnswer)


def sync(*, resolve: str | None = None) -> Call[SyncAnswer]:
    """One round with the followed remote at once, or (``resolve``) a conflict marked resolved."""
    from headd.wire.remote_answers import SyncAnswer

    return Call(methods.Sync(resolve=resolve), SyncAnswer)


# -- the MCP bridge's writes and checks ------------------------------------------------------


def near_duplicates(
    texts: list[str], *, titles: list[str] | None = None
) -> Call[NearDuplicatesAnswer]:
    """``near_duplicates``: each text's stored near duplicates (a batch's check before it writes)."""
    return Call(methods.NearDuplicates(texts=texts, titles=titles), NearDuplicatesAnswer)


def source(
    path: str, *, at: str | None = None, session: str | None = None
) -> Call[browse.SourceAnswer]:
    """``source``: the file text of the memory at ``path`` (what a correction stamps)."""
    return Call(browse.SourceRequest(path=path, at=at, session=session), browse.SourceAnswer)


def reinforce(
    paths: list[str], *, signal: Literal["neutral", "positive", "negative"] = "neutral"
) -> Call[ReinforceAnswer]:
    return Call(methods.Reinforce(paths=paths, signal=signal), ReinforceAnswer)
