"""The SQLite plane's methods as plain calls over open connections, shared by the daemon and
``headctl``.

The daemon runs these on its plane threads (writes on the one writer, reads on read-only
readers); ``headctl`` runs the same calls in its own process when no daemon serves the store, so
both paths answer with the same shapes by construction. Every call takes what it touches
(a plane, a connection, a retrieval) and the instant it should consider ``now``; none reads the
clock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from headd.errors import IndexStale, SessionNotFound
from headd.wire.answers import (
    IndexRebuildAnswer,
    IndexUpdateAnswer,
    ReinforceAnswer,
    StateExportAnswer,
    StateImportAnswer,
    TracesIndexAnswer,
)
from headd.wire.browse import SessionLinkRow, StateUsageAnswer, TracesLinksAnswer, UsageRow
from headd.wire.doctor import StatePruneAnswer
from headd.wire.plane_answers import (
    IndexSearchAnswer,
    IndexStatusAnswer,
    RecallAnswer,
    TracesSearchAnswer,
    TracesShowAnswer,
)

if TYPE_CHECKING:
    from headd.wire.filter import Filter
    from headd_plane.plane import Plane
    from headd_plane.recall import RankedPool
    from headd_plane.retrieval import Retrieval
    from headd_plane.scope import Scope


@dataclass(frozen=True, slots=True)
class WroteLinks:
    """The provenance of one landed session commit, for ``memory_session_links``."""

    session_id: str
    prompt_id: str | None
    turn: str | None
    at: str
    paths: tuple[str, ...]


# -- index ------------------------------------------------------------------------------------


def index_rebuild(plane: Plane, embed: bool = False, force: bool = False) -> IndexRebuildAnswer:
    return plane.rebuild(embed=embed, force=force)


def index_update(plane: Plane, embed: bool = False) -> IndexUpdateAnswer:
    return plane.update(embed=embed)


def watch_work_tree(plane: Plane) -> bool:
    """Have the plane's updates learn the dirty work tree from inotify instead of a status scan
    of every file (the daemon's long-lived plane; ``headctl`` keeps the scan). False when no
    watch could be had (not Linux, a watch limit): the scan stays."""
    return plane.indexer.git.watch_work_tree()


def unwatch_work_tree(plane: Plane) -> None:
    plane.indexer.git.unwatch_work_tree()


def index_status(plane: Plane) -> IndexStatusAnswer:
    return plane.status()


def indexed_sha(conn: sqlite3.Connection) -> str:
    """The commit the index reflects; IndexStale when it holds none (never built, or a rebuild
    emptied it and did not finish): answering from it would silently miss memories."""
    try:
        row = conn.execute("SELECT head_sha FROM index_state LIMIT 1").fetchone()
    except sqlite3.Error:
        row = None
    if row is None:
        raise IndexStale(
            "the SQLite index has not been built yet; run an index update",
            {"reason": "not-indexed"},
        )
    if row[0] is None:
        raise IndexStale(
            "a rebuild emptied the index and did not finish repopulating it; run a rebuild",
            {"reason": "rebuild-unfinished"},
        )
    return str(row[0])


def scope_of(filter_: Filter | None) -> Scope:
    from headd_plane.scope import scope_from_filter

    return scope_from_filter(filter_)


def search(
    retrieval: Retrieval,
    query: str,
    filter_: Filter | None,
    limit: int,
    now_epoch: float | None,
) -> IndexSearchAnswer:
    """The plane's four-arm search at the commit the index holds."""
    sha = indexed_sha(retrieval.db.conn)
    return retrieval.search(query, scope_of(filter_), limit, now_epoch).answer(sha)


def recall(
    retrieval: Retrieval,
    query: str,
    filter_: Filter | None,
    budget_chars: int | None,
    now_epoch: float | None,
    ranked: RankedPool | None = None,
) -> RecallAnswer:
    """The disclosure pack at the commit the index holds; ``ranked`` (a
    ``headd_plane.recall.RankedPool``) is the head search's ranking to fold."""
    from headd_plane.recall import recall as fold_recall

    sha = indexed_sha(retrieval.db.conn)
    pack = fold_recall(retrieval, query, scope_of(filter_), budget_chars, now_epoch, ranked)
    return pack.answer(sha)


# -- state --------------------------------------------------------------------------------------


def reinforce(
    conn: sqlite3.Connection, paths: Iterable[str], signal: str, now: datetime
) -> ReinforceAnswer:
    from headd_plane.state import reinforce as bump

    result = bump(conn, [p.lstrip("/") for p in paths], signal, now)
    return ReinforceAnswer(result["bumped"], result["cooled_down"])


def state_access_paths(conn: sqlite3.Connection) -> list[str]:
    """Every path the state plane keeps an access row for, sorted (``doctor``'s orphan check
    compares them with the version); empty when the state plane is not attached."""
    try:
        rows = conn.execute("SELECT path FROM state.access ORDER BY path").fetchall()
    except sqlite3.Error:
        return []
    return [str(row[0]) for row in rows]


def state_usage(conn: sqlite3.Connection, path: str) -> StateUsageAnswer:
    """``path``'s access row, or none when it has none or the state plane is not attached."""
    try:
        row = conn.execute(
            "SELECT access_count, reinforcement_count, outcome_score, last_accessed_at, "
            "last_reinforced_at FROM state.access WHERE path = ?",
            (path,),
        ).fetchone()
    except sqlite3.Error:
        row = None
    if row is None:
        return StateUsageAnswer(path=path, usage=None)
    count, reinforced, outcome, accessed_at, reinforced_at = row
    return StateUsageAnswer(
        path=path,
        usage=UsageRow(
            access_count=int(count or 0),
            reinforcement_count=int(reinforced or 0),
            outcome_score=float(outcome or 0.0),
            last_accessed_at=None if accessed_at is None else str(accessed_at),
            last_reinforced_at=None if reinforced_at is None else str(reinforced_at),
        ),
    )


def state_prune(conn: sqlite3.Connection, paths: Iterable[str]) -> StatePruneAnswer:
    """Delete the access rows of ``paths``, one statement each (the list is unbounded)."""
    from headd_plane.state import transaction

    pruned = 0
    with transaction(conn):
        for path in paths:
            pruned += conn.execute("DELETE FROM state.access WHERE path = ?", (path,)).rowcount
    return StatePruneAnswer(pruned=pruned)


def state_export(conn: sqlite3.Connection, store: Path) -> StateExportAnswer:
    from headd_plane.sidecar import export_sidecar

    return StateExportAnswer(**export_sidecar(conn, store))


def state_import(conn: sqlite3.Connection, store: Path) -> StateImportAnswer:
    from headd_plane.sidecar import import_sidecar

    return StateImportAnswer(**import_sidecar(conn, store))


# -- traces -------------------------------------------------------------------------------------


def traces_index(conn: sqlite3.Connection, root: Path, now: datetime) -> TracesIndexAnswer:
    from headd_plane.traces import traces_index as scan

    return TracesIndexAnswer(**scan(conn, root, now), trace_root=str(root))


def traces_search(conn: sqlite3.Connection, query: str, limit: int) -> TracesSearchAnswer:
    from headd_plane.traces import traces_search as find

    return find(conn, query, limit)


def traces_show(conn: sqlite3.Connection, session: str) -> TracesShowAnswer:
    """One transcript session with its prompts and linked memories.

    A session that wrote memories before its transcript was indexed (or on a machine without
    it) still has its ``memory_session_links`` rows, which have no foreign key to ``traces`` on
    purpose; it is shown with ``indexed: false`` and those memories rather than refused, so
    provenance recorded at write time is never unreachable.
    """
    from headd_plane.traces.search import session_memories
    from headd_plane.traces.search import traces_show as show

    try:
        return show(conn, session)
    except SessionNotFound:
        memories = session_memories(conn, session)
        if not memories:
            raise
        return TracesShowAnswer(
            session_id=session,
            prompts=[],
            memories=memories,
            files=[],
            missing=False,
            indexed=False,
        )


def traces_links(conn: sqlite3.Connection, path: str) -> TracesLinksAnswer:
    """Every session ``path`` was linked to (``memory_session_links``), oldest first."""
    from headd_plane.recorder import links_for_path

    rows = links_for_path(conn, path)
    return TracesLinksAnswer(
        links=[
            SessionLinkRow(
                path=r.path,
                session_id=r.session_id,
                prompt_id=r.prompt_id,
                turn_uuid=r.turn_uuid,
                link_kind=r.link_kind,
                at=r.at,
            )
            for r in rows
        ]
    )


def record_wrote(conn: sqlite3.Connection, links: WroteLinks) -> int:
    """One ``wrote`` link per landed path; returns how many were new (a repeat adds nothing)."""
    from headd_plane.recorder import SessionLink, record_link

    added = 0
    for path in links.paths:
        link = SessionLink(
            path=path,
            session_id=links.session_id,
            link_kind="wrote",
            at=links.at,
            prompt_id=links.prompt_id,
            turn_uuid=links.turn,
        )
        added += int(record_link(conn, link))
    return added
