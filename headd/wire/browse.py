"""The browsing methods' requests and answers: ``list``, ``census``, ``neighbors``, ``source`` and
``traces.links``, one msgspec Struct each way.

These are the reads a person or an agent browses a store with (memhtml's ``list``, ``status``,
``neighbors``, and the file a correction stamps). They are pure functions of one version
(``headd.head.browse``), so the MCP bridge and ``headctl`` ask the daemon instead of walking git,
reading every record over the socket or opening ``state.db`` themselves; one rule per read lives
in one place and the two clients cannot disagree.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

#: memhtml's page size for ``list`` and its ceiling.
LIST_DEFAULT = 50
LIST_MAX = 200
#: memhtml's ceiling on the nodes of a neighbourhood, and on its depth.
NEIGHBORS_MAX = 200
NEIGHBORS_DEPTH_MAX = 2


class _Params(msgspec.Struct, forbid_unknown_fields=True):
    """Base of every params Struct (unknown fields are refused, as an unknown flag)."""


class ListRequest(_Params):
    """``list``: the memories in path order after ``cursor``, ``limit`` at a time.

    Every type is listed unless ``types`` narrows it (tasks included: a listing is a scan, not a
    ranking). Archived memories are listed only with ``include_archived`` (under ``para: archive``
    too), as memhtml lists them.
    """

    types: list[str] | None = None
    workspace: str | None = None
    tags: list[str] | None = None
    entity: str | None = None
    facets: list[str] | None = None
    para: str | None = None
    include_archived: bool = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=LIST_MAX)] = LIST_DEFAULT
    cursor: str | None = None
    at: str | None = None
    session: str | None = None


class ListedFile(msgspec.Struct, kw_only=True):
    """One row of ``list`` (memhtml's ``memory_list`` file fields)."""

    path: str
    title: str
    memory_type: str
    gist: str
    workspace: str | None
    para: str
    confidence: float
    importance: int
    archived: bool
    updated_at: str
    tags: list[str] = msgspec.field(default_factory=list)
    entities: list[str] = msgspec.field(default_factory=list)
    task_status: str | None = None
    due: str | None = None


class ListAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    files: list[ListedFile]
    #: The last listed path when more follow (pass it back as ``cursor``), else None.
    next_cursor: str | None


class CensusRequest(_Params):
    """``census``: how many memories of each type, how many archived, how many head links."""

    at: str | None = None
    session: str | None = None


class CensusAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    #: Active memories per type, sorted by type.
    counts_by_type: dict[str, int]
    archived_count: int
    #: Head links over every record, archived ones included.
    edges: int
    #: Whether the checkout holds uncommitted edits to tracked files (None for a bare store).
    dirty: bool | None
    #: The vector coverage below which a search reports itself degraded.
    vector_coverage_floor: float


class NeighborsRequest(_Params):
    """``neighbors``: the memories linked to ``path`` either way, up to ``depth`` hops."""

    path: str
    depth: Annotated[int, msgspec.Meta(ge=1, le=NEIGHBORS_DEPTH_MAX)] = 1
    limit: Annotated[int, msgspec.Meta(ge=1, le=NEIGHBORS_MAX)] = NEIGHBORS_MAX
    rels: list[str] | None = None
    at: str | None = None
    session: str | None = None


class NeighborNode(msgspec.Struct, kw_only=True):
    path: str
    title: str
    hop: int
    rel: str
    derived: bool = False


class NeighborsAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    nodes: list[NeighborNode]
    #: Distinct ``(source, rel, target)`` links seen while walking.
    edges: int
    node_limit: int
    dropped_node_count: int
    scan_saturated: bool = False


class SourceRequest(_Params):
    """``source``: the file text of the memory at ``path`` (what a correction stamps)."""

    path: str
    at: str | None = None
    session: str | None = None


class SourceAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    path: str
    html: str | None


class TracesLinksRequest(_Params):
    """``traces.links``: every session a memory was linked to, from the state plane."""

    path: str


class SessionLinkRow(msgspec.Struct, kw_only=True):
    path: str
    session_id: str
    prompt_id: str | None
    turn_uuid: str | None
    link_kind: str
    at: str


class TracesLinksAnswer(msgspec.Struct, kw_only=True):
    links: list[SessionLinkRow]


class StateUsageRequest(_Params):
    """``state.usage``: a memory's usage row (accesses, reinforcements, outcome) from the state
    plane, for readers that show it to a person without opening the daemon's database."""

    path: str


class UsageRow(msgspec.Struct, kw_only=True):
    access_count: int
    reinforcement_count: int
    outcome_score: float
    last_accessed_at: str | None
    last_reinforced_at: str | None


class StateUsageAnswer(msgspec.Struct, kw_only=True):
    path: str
    usage: UsageRow | None


#: memhtml's bounds on an entity activity page (a request outside them is clamped, not refused).
ENTITY_ACTIVITY_DEFAULT = 50
ENTITY_ACTIVITY_MAX = 500


class EntityActivityRequest(_Params):
    """``entity.activity``: every entity with its file count and last activity, newest first."""

    type: str | None = None
    limit: int = ENTITY_ACTIVITY_DEFAULT
    include_archived: bool = False
    at: str | None = None
    session: str | None = None


class EntityActivityRow(msgspec.Struct, kw_only=True):
    entity: str
    entity_type: str
    entity_name: str
    file_count: int
    last_activity_at: str | None
    last_written_at: str | None


class EntityActivityAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    entities: list[EntityActivityRow]
    #: Every entity the scope matched (``entities`` holds the first ``limit``).
    entity_count: int
    #: The bound the answer was built under, after clamping.
    limit: int


class TasksRequest(_Params):
    """``tasks``: the task working set in path order, a scan, never ranked."""

    status: str | None = None
    workspace: str | None = None
    #: Tasks due strictly before this calendar day (``YYYY-MM-DD``).
    due_before: str | None = None
    include_archived: bool = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=LIST_MAX)] = LIST_DEFAULT
    cursor: str | None = None
    at: str | None = None
    session: str | None = None


class TaskRow(msgspec.Struct, kw_only=True):
    path: str
    title: str
    task_status: str | None
    due: str | None
    workspace: str | None
    archived: bool
    updated_at: str
    #: Open tasks whose ``blocks`` link points at this one.
    blocked_by: list[str]


class TasksAnswer(msgspec.Struct, kw_only=True):
    sha: str | None
    tasks: list[TaskRow]
    next_cursor: str | None
