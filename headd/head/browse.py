"""Browsing one version: a listing, a census, a neighbourhood. Pure functions of the version.

They answer the daemon's ``list``, ``census`` and ``neighbors`` (``headd.wire.browse``), which the
MCP bridge's ``memory_list``/``memory_status``/``memory_neighbors`` and ``headctl``'s ``list``,
``status`` and ``neighbors`` all call, so each rule is written once:

- a listing admits records with the one predicate every search uses (``Scope``), with its own
  default of every type (a listing is a scan, so tasks are listed) and archived records only
  with ``include_archived``, under ``para: archive`` too, as memhtml lists; it pages by a keyset cursor on the path, in path order;
- a census counts active records per type, archived records and head links;
- a neighbourhood walks head links outward and the inbound index inward, breadth first, at most
  two hops, each node once, at its first hop;
- an entity's activity is how many admitted records name it and their newest stamp;
- the task working set is a scan of ``task`` records in path order, with their open blockers.
"""

from __future__ import annotations

from collections.abc import Iterable

from headd.head.indexes import IndexedView
from headd.head.scope import Scope, ascii_lower
from headd.record import MEMORY_TYPES, PARA_BUCKETS, MemoryRecord
from headd.wire.browse import (
    ENTITY_ACTIVITY_MAX,
    CensusAnswer,
    EntityActivityAnswer,
    EntityActivityRequest,
    EntityActivityRow,
    ListAnswer,
    ListedFile,
    ListRequest,
    NeighborNode,
    NeighborsAnswer,
    NeighborsRequest,
    TaskRow,
    TasksAnswer,
    TasksRequest,
)


def listing_scope(request: ListRequest) -> Scope:
    """The scope a listing admits with: every type unless ``types`` narrows, archived records
    only with ``include_archived`` (memhtml's ``list --para archive`` alone answers nothing)."""
    return Scope(
        types=tuple(request.types or MEMORY_TYPES),
        workspace=request.workspace,
        tags=tuple(request.tags or ()),
        entity=request.entity,
        facets=tuple(request.facets or ()),
        include_archived=request.include_archived,
    )


def _bucket(path: str) -> str:
    return path.split("/", 1)[0]


def listed(record: MemoryRecord) -> ListedFile:
    """A record as one listing row."""
    return ListedFile(
        path=record.path,
        title=record.title,
        memory_type=record.memory_type,
        gist=record.claim,
        workspace=record.workspace,
        para=record.para or _bucket(record.path),
        confidence=record.confidence,
        importance=record.importance,
        archived=record.archived,
        updated_at=record.updated_at or record.created_at or "",
        tags=list(record.tags),
        entities=list(record.entities),
        task_status=record.task_status,
        due=record.due,
    )


def list_records(view: IndexedView, request: ListRequest) -> ListAnswer:
    """One page of the listing: the first ``limit`` admitted records after ``cursor``."""
    admit = listing_scope(request)
    para = request.para
    cursor = request.cursor
    paths = sorted(
        path
        for path in view.paths()
        if _bucket(path) in PARA_BUCKETS
        and (para is None or _bucket(path) == para)
        and (cursor is None or path > cursor)
    )
    files: list[ListedFile] = []
    next_cursor = None
    for path in paths:
        record = view.record(path)
        if record is None or not admit(record):
            continue
        if len(files) == request.limit:
            next_cursor = files[-1].path
            break
        files.append(listed(record))
    return ListAnswer(sha=view.sha, files=files, next_cursor=next_cursor)


def census(view: IndexedView, *, dirty: bool | None, vector_coverage_floor: float) -> CensusAnswer:
    """Active records per type, archived records, head links (the work tree's state and the
    coverage floor are the caller's: they are not the version's)."""
    counts: dict[str, int] = {}
    archived = 0
    edges = 0
    for record in view.records():
        if _bucket(record.path) not in PARA_BUCKETS:
            continue
        edges += len(record.links)
        if record.archived:
            archived += 1
        else:
            counts[record.memory_type] = counts.get(record.memory_type, 0) + 1
    return CensusAnswer(
        sha=view.sha,
        counts_by_type=dict(sorted(counts.items())),
        archived_count=archived,
        edges=edges,
        dirty=dirty,
        vector_coverage_floor=vector_coverage_floor,
    )


def href_path(href: str) -> str:
    """A head link's target as a store path (hrefs are written root-relative)."""
    return href.strip().lstrip("/")


def neighbours(view: IndexedView, request: NeighborsRequest) -> NeighborsAnswer | None:
    """The neighbourhood of ``request.path``, or None when the version holds no such record."""
    start = href_path(request.path)
    first = view.record(start)
    if first is None:
        return None
    rels = frozenset(request.rels or ())
    seen = {start}
    frontier: list[tuple[str, MemoryRecord | None]] = [(start, first)]
    nodes: list[NeighborNode] = []
    edges: set[tuple[str, str, str]] = set()
    dropped = 0
    for hop in range(1, request.depth + 1):
        following: list[tuple[str, MemoryRecord | None]] = []
        for other, rel, record, inward in _adjacent(view, frontier, rels, edges):
            if other in seen:
                continue
            if inward is not None:
                edges.add(inward)
            seen.add(other)
            if len(nodes) >= request.limit:
                dropped += 1
                continue
            title = "" if record is None else record.title
            nodes.append(NeighborNode(path=other, title=title, hop=hop, rel=rel))
            following.append((other, record))
        frontier = following
    return NeighborsAnswer(
        sha=view.sha,
        nodes=nodes,
        edges=len(edges),
        node_limit=request.limit,
        dropped_node_count=dropped,
    )


def _adjacent(
    view: IndexedView,
    frontier: Iterable[tuple[str, MemoryRecord | None]],
    rels: frozenset[str],
    edges: set[tuple[str, str, str]],
) -> list[tuple[str, str, MemoryRecord | None, tuple[str, str, str] | None]]:
    """Every (path, rel, record, inward edge) one link away from the frontier, links out of
    each node first and then the links into it. An outward link is an edge as soon as it is
    walked (noted in ``edges``); an inward one only when it reaches a node not seen yet, so the
    caller notes it."""
    found: list[tuple[str, str, MemoryRecord | None, tuple[str, str, str] | None]] = []
    for path, record in frontier:
        for link in () if record is None else record.links:
            if rels and link.rel not in rels:
                continue
            other = href_path(link.href)
            edges.add((path, link.rel, other))
            found.append((other, link.rel, view.record(other), None))
        target = "/" + path
        for source in view.inbound(target):
            back = view.record(source)
            matching = [
                link.rel
                for link in (() if back is None else back.links)
                if link.href == target and (not rels or link.rel in rels)
            ]
            if not matching:
                continue
            found.append((source, matching[0], back, (source, matching[0], path)))
    return found


def _stamp(record: MemoryRecord) -> str | None:
    return record.updated_at or record.created_at


def entity_activity(view: IndexedView, request: EntityActivityRequest) -> EntityActivityAnswer:
    """Every entity the admitted records name (their entity rows, as ``file_entities`` holds
    them), with how many records name it and the newest stamp among them, newest first."""
    limit = min(max(request.limit, 1), ENTITY_ACTIVITY_MAX)
    wanted = None if request.type is None else ascii_lower(request.type.strip())
    counts: dict[tuple[str, str], int] = {}
    latest: dict[tuple[str, str], str | None] = {}
    for record in view.records():
        if _bucket(record.path) not in PARA_BUCKETS:
            continue
        if record.archived and not request.include_archived:
            continue
        stamp = _stamp(record)
        for row in {(r.entity_type, r.entity_name) for r in record.entity_rows}:
            if wanted is not None and ascii_lower(row[0]) != wanted:
                continue
            counts[row] = counts.get(row, 0) + 1
            held = latest.get(row)
            if held is None or (stamp is not None and stamp > held):
                latest[row] = stamp
    ordered = sorted(counts, key=lambda row: f"{row[0]}:{row[1]}")
    ordered.sort(key=lambda row: latest.get(row) or "", reverse=True)
    rows = [
        EntityActivityRow(
            entity=f"{kind}:{name}",
            entity_type=kind,
            entity_name=name,
            file_count=counts[(kind, name)],
            last_activity_at=latest[(kind, name)],
            last_written_at=latest[(kind, name)],
        )
        for kind, name in ordered[:limit]
    ]
    return EntityActivityAnswer(sha=view.sha, entities=rows, entity_count=len(counts), limit=limit)


_BLOCKS = "blocks"
_DONE = "done"


def tasks(view: IndexedView, request: TasksRequest) -> TasksAnswer:
    """One page of the task working set in path order: a scan, never a ranking. Finished tasks
    are archived, so they are listed only with ``include_archived``."""
    rows: list[TaskRow] = []
    next_cursor = None
    for path in sorted(view.paths()):
        if request.cursor is not None and path <= request.cursor:
            continue
        record = view.record(path)
        if record is None or record.memory_type != "task":
            continue
        if _bucket(path) not in PARA_BUCKETS:
            continue
        if record.archived and not request.include_archived:
            continue
        if request.status is not None and record.task_status != request.status:
            continue
        if request.workspace is not None and record.workspace != request.workspace:
            continue
        if request.due_before is not None and not (
            record.due is not None and record.due[:10] < request.due_before[:10]
        ):
            continue
        if len(rows) == request.limit:
            next_cursor = rows[-1].path
            break
        rows.append(
            TaskRow(
                path=path,
                title=record.title,
                task_status=record.task_status,
                due=record.due,
                workspace=record.workspace,
                archived=record.archived,
                updated_at=_stamp(record) or "",
                blocked_by=_blockers(view, path),
            )
        )
    return TasksAnswer(sha=view.sha, tasks=rows, next_cursor=next_cursor)


def _blockers(view: IndexedView, path: str) -> list[str]:
    """The open tasks whose ``blocks`` link points at ``path``."""
    href = "/" + path
    out = []
    for source in view.inbound(href):
        blocker = view.record(source)
        if blocker is None or blocker.archived or blocker.task_status == _DONE:
            continue
        if any(link.rel == _BLOCKS and link.href == href for link in blocker.links):
            out.append(source)
    return out
