"""The daemon's methods as typed requests: one msgspec Struct of params per method name.

``decode_request`` turns a method name and its raw params into one of these values, so the
handlers ``match`` on a type instead of poking at dicts, and a malformed params object is refused
here with -32602 naming the offending field. Adding a method is one Struct, one entry in
``METHODS`` and one ``case`` in ``handlers.py``. Field names and defaults are those of
docs/protocol.md, "Methods"; unknown fields are refused, as a command line refuses an unknown flag.

Every memory path a request carries (``read``/``resolve``'s ``path``, ``inbound``'s ``href``,
``reinforce``'s ``paths``, each op's ``path``, ``to`` and ``href``) is held to the one rule of
``headd.paths.path_problem`` here, before any handler runs, so no method can answer a path the
others refuse (a ``read`` of ``areas/x\n.html`` is -32602, not ``record: null``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Raw

from headd.errors import InvalidParams, MethodNotFound
from headd.ops import Archive, LinkOp, Move, Op, UnlinkOp, Write
from headd.paths import path_problem
from headd.wire.browse import (
    CensusRequest,
    EntityActivityRequest,
    ListRequest,
    NeighborsRequest,
    SourceRequest,
    StateUsageRequest,
    TasksRequest,
    TracesLinksRequest,
)
from headd.wire.doctor import DoctorRequest, StatePrune
from headd.wire.exec_bounds import EXEC_DEFAULT_TIMEOUT_MS, EXEC_MAX_TIMEOUT_MS
from headd.wire.filter import Filter
from headd.wire.publish import PublishRequest

Limit = Annotated[int, msgspec.Meta(ge=1, le=10_000)]


class _Params(msgspec.Struct, forbid_unknown_fields=True):
    """Base of every params Struct."""


class Status(_Params):
    """``memory``: account for where the bytes go (records, postings, vectors, the plane), a walk
    of the followed version on its first ask; without it ``status.memory`` is the process's
    resident and peak memory only, so a status poll stays cheap after every commit."""

    memory: bool = False


class Search(_Params):
    query: str
    limit: Limit = 10
    at: str | None = None
    session: str | None = None
    now: str | None = None
    filter: Filter | None = None
    vectors: bool = True
    plane: Literal["head", "index"] = "head"
    #: Each hit also carries its full ``record`` (the MCP bridge's one round trip per search).
    records: bool = False
    #: The head search's mode (``headd.head.search``): the hybrid default, or memhtml's head
    #: search rule for rule (what the head gate ranks with).
    mode: Literal["hybrid", "seed-exact"] = "hybrid"
    #: Each hit also carries ``why``: its score split by the arms that found it.
    explain: bool = False
    #: Keep only hits covering at least this share of the query (``headd.head.relevance``), each
    #: carrying its ``coverage``; a query of fewer than two content words then has no hit. What
    #: the prompt hook asks with, since a search's own scores are relative.
    relevance_floor: float | None = None


class Read(_Params):
    path: str
    at: str | None = None
    session: str | None = None


class Skipped(_Params):
    at: str | None = None


class Resolve(_Params):
    path: str
    at: str | None = None
    session: str | None = None


class Inbound(_Params):
    href: str
    at: str | None = None
    session: str | None = None


class ByEntity(_Params):
    entity: str
    at: str | None = None
    session: str | None = None


class ByFrameKey(_Params):
    key: str
    at: str | None = None
    session: str | None = None


class NearDuplicates(_Params):
    """Texts about to be written, each against the active memories (tasks aside) and the
    texts before it: the matches at or above ``floor`` cosine, best first, ``k`` at most."""

    texts: Annotated[list[str], msgspec.Meta(max_length=200)]
    #: each text's title: a stored memory's vector is its article's and its title's together
    titles: Annotated[list[str], msgspec.Meta(max_length=200)] | None = None
    floor: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.92
    k: Annotated[int, msgspec.Meta(ge=1, le=50)] = 3


class ByContentHash(_Params):
    hash: str
    at: str | None = None
    session: str | None = None


class Advance(_Params):
    to: str | None = None


class Gate(_Params):
    base: str
    landed: str
    probes: Annotated[int, msgspec.Meta(ge=0, le=100_000)] = 200
    k: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 10
    tolerance: Annotated[float, msgspec.Meta(ge=0)] = 0.02
    seed: int = 1


class SessionOpen(_Params):
    id: str | None = None
    base: str | None = None


class SessionApply(_Params):
    session: str
    ops: list[Op]


class SessionCommit(_Params):
    """``session_id``/``prompt_id``/``turn`` are the transcript provenance of the writes:
    stamped into each written file's head, the commit's trailers and ``memory_session_links``."""

    session: str
    message: str | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn: str | None = None
    #: ``auto``: a stale base is rebased onto the tip inside the commit lock unless something
    #: really conflicts; ``never``: a stale base answers ``rebase-needed``.
    rebase: Literal["auto", "never"] = "auto"


class SessionRebase(_Params):
    session: str
    onto: str | None = None


class SessionClose(_Params):
    session: str


class SessionList(_Params):
    pass


# -- the SQLite plane ----------------------------------------------------------------------


class Recall(_Params):
    query: str
    budget_chars: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    filter: Filter | None = None
    now: str | None = None


class Reinforce(_Params):
    paths: Annotated[list[str], msgspec.Meta(max_length=100_000)]
    signal: Literal["neutral", "positive", "negative"] = "neutral"


class IndexRebuild(_Params):
    embed: bool = False
    force: bool = False


class IndexUpdate(_Params):
    embed: bool = False


class IndexStatus(_Params):
    pass


class StateExport(_Params):
    pass


class StateImport(_Params):
    pass


class TracesIndex(_Params):
    trace_root: str | None = None


class TracesSearch(_Params):
    query: str = ""
    limit: Limit = 10


class TracesShow(_Params):
    session: str


class VectorsFill(_Params):
    """Embed what the vector cache lacks now (all of it, or at most ``limit`` texts)."""

    limit: Annotated[int, msgspec.Meta(ge=0)] | None = None


class Sync(_Params):
    """One round with the followed remote now; ``resolve`` marks a conflict (its path or id)
    resolved instead."""

    resolve: str | None = None


class Exec(_Params):
    """One read-only script over commit ``at`` (the tip when None), cut off at ``timeout_ms``
    (docs/codemode.md)."""

    script: str
    lang: Literal["js"] = "js"
    at: str | None = None
    timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=EXEC_MAX_TIMEOUT_MS)] = EXEC_DEFAULT_TIMEOUT_MS


# -- sleep -----------------------------------------------------------------------------------

#: A run's phases: a subset of headd.sleep.catalog.PHASES (an unknown name is refused there).
Phases = Annotated[list[str], msgspec.Meta(max_length=64)]


class SleepPlan(_Params):
    date: str | None = None
    phases: Phases | None = None


class SleepRun(_Params):
    date: str | None = None
    phases: Phases | None = None
    dry_run: bool = False


class SleepReview(_Params):
    run: str
    #: Also the run's raw diff against its base (memhtml's ``--diff``).
    diff: bool = False


class SleepMerge(_Params):
    run: str
    skip_gate: bool = False


class SleepResume(_Params):
    run: str
    date: str | None = None


class SleepStatus(_Params):
    pass


class SleepDiscard(_Params):
    run: str


Request = (
    Status
    | Search
    | Read
    | Skipped
    | Resolve
    | Inbound
    | ByEntity
    | ByFrameKey
    | ByContentHash
    | Advance
    | Gate
    | SessionOpen
    | SessionApply
    | SessionCommit
    | SessionRebase
    | SessionClose
    | SessionList
    | Recall
    | Reinforce
    | IndexRebuild
    | IndexUpdate
    | IndexStatus
    | StateExport
    | StateImport
    | TracesIndex
    | TracesSearch
    | TracesShow
    | VectorsFill
    | Sync
    | Exec
    | ListRequest
    | CensusRequest
    | NeighborsRequest
    | SourceRequest
    | TracesLinksRequest
    | StateUsageRequest
    | EntityActivityRequest
    | TasksRequest
    | DoctorRequest
    | StatePrune
    | PublishRequest
    | SleepPlan
    | SleepRun
    | SleepReview
    | SleepMerge
    | SleepResume
    | SleepStatus
    | SleepDiscard
)

METHODS: dict[str, type[msgspec.Struct]] = {
    "status": Status,
    "search": Search,
    "read": Read,
    "skipped": Skipped,
    "resolve": Resolve,
    "inbound": Inbound,
    "by_entity": ByEntity,
    "by_frame_key": ByFrameKey,
    "near_duplicates": NearDuplicates,
    "by_content_hash": ByContentHash,
    "advance": Advance,
    "gate": Gate,
    "session.open": SessionOpen,
    "session.apply": SessionApply,
    "session.commit": SessionCommit,
    "session.rebase": SessionRebase,
    "session.close": SessionClose,
    "session.list": SessionList,
    "recall": Recall,
    "reinforce": Reinforce,
    "index.rebuild": IndexRebuild,
    "index.update": IndexUpdate,
    "index.status": IndexStatus,
    "state.export": StateExport,
    "state.import": StateImport,
    "traces.index": TracesIndex,
    "traces.search": TracesSearch,
    "traces.show": TracesShow,
    "vectors.fill": VectorsFill,
    "sync": Sync,
    "exec": Exec,
    "list": ListRequest,
    "census": CensusRequest,
    "neighbors": NeighborsRequest,
    "source": SourceRequest,
    "traces.links": TracesLinksRequest,
    "state.usage": StateUsageRequest,
    "entity.activity": EntityActivityRequest,
    "tasks": TasksRequest,
    "doctor": DoctorRequest,
    "state.prune": StatePrune,
    "publish": PublishRequest,
    "sleep.plan": SleepPlan,
    "sleep.run": SleepRun,
    "sleep.review": SleepReview,
    "sleep.merge": SleepMerge,
    "sleep.resume": SleepResume,
    "sleep.status": SleepStatus,
    "sleep.discard": SleepDiscard,
}

_DECODERS = {name: msgspec.json.Decoder(cls) for name, cls in METHODS.items()}
_EMPTY = b"{}"


def decode_request(method: str, params: Raw | bytes | None) -> Request:
    """The typed request for ``method``; MethodNotFound or InvalidParams when it cannot be one."""
    decoder = _DECODERS.get(method)
    if decoder is None:
        raise MethodNotFound(f"method not found: {method}", {"method": method})
    raw = _EMPTY if params is None else params
    try:
        value = decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise InvalidParams(f"invalid params for {method}: {exc}") from None
    except msgspec.DecodeError as exc:  # params present but not JSON: cannot happen after framing
        raise InvalidParams(f"invalid params for {method}: {exc}") from None
    for field, path in paths_of(value):
        problem = path_problem(path)
        if problem is not None:
            raise InvalidParams(
                f"invalid params for {method}: `{field}`: {problem}",
                {"field": field, "path": path[:300], "rule": problem},
            )
    return value  # type: ignore[return-value]


def paths_of(request: msgspec.Struct) -> list[tuple[str, str]]:
    """Every memory path ``request`` names, with the field it sits in (``ops[2].to``)."""
    match request:
        case (
            Read(path=path)
            | Resolve(path=path)
            | NeighborsRequest(path=path)
            | SourceRequest(path=path)
            | TracesLinksRequest(path=path)
            | StateUsageRequest(path=path)
        ):
            return [("path", path)]
        case Inbound(href=href):
            return [("href", href)]
        case Reinforce(paths=paths) | StatePrune(paths=paths):
            return [(f"paths[{i}]", path) for i, path in enumerate(paths)]
        case SessionApply(ops=ops):
            return [
                (f"ops[{i}].{name}", path)
                for i, op in enumerate(ops)
                for name, path in _op_paths(op)
            ]
    return []


def _op_paths(op: Op) -> list[tuple[str, str]]:
    match op:
        case Write(path=path):
            return [] if path is None else [("path", path)]
        case Archive(path=path, to=to) | Move(path=path, to=to):
            return [("path", path)] if to is None else [("path", path), ("to", to)]
        case LinkOp(path=path, href=href) | UnlinkOp(path=path, href=href):
            return [("path", path), ("href", href)]
    return [("path", op.path)]
