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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from headd.errors import IndexStale, SessionNotFound
from headd.wire.filter import Filter


@dataclass(frozen=True, slots=True)
class WroteLinks:
    """The provenance of one landed session commit, for ``memory_session_links``."""

    session_id: str
    prompt_id: str | None
    turn: str | None
    at: str
    paths: tuple[str, ...]


# -- index ------------------------------------------------------------------------------------


def index_rebuild(plane: Any, embed: bool = False, force: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = plane.rebuild(embed=embed, force=force).to_wire()
    return report


def index_update(plane: Any, embed: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = plane.update(embed=embed).to_wire()
    return report


def watch_work_tree(plane: Any) -> bool:
    """Have the plane's updates learn the dirty work tree from inotify instead of a status scan
    of every file (the daemon's long-lived plane; ``headctl`` keeps the scan). False when no
    watch could be had (not Linux, a watch limit): the scan stays."""
    git = getattr(getattr(plane, "indexer", None), "git", None)
    start = getattr(git, "watch_work_tree", None)
    return bool(start()) if start is not None else False


def unwatch_work_tree(plane: Any) -> None:
    git = getattr(getattr(plane, "indexer", None), "git", None)
    stop = getattr(git, "unwatch_work_tree", None)
    if stop is not None:
        stop()


def index_status(plane: Any) -> dict[str, Any]:
    status: dict[str, Any] = plane.status()
    return status


def indexed_sha(conn: sqlite3.Connection) -> str | None:
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


def scope_of(filter_: Filter | Mapping[str, Any] | None) -> Any:
    from headd_plane.scope import scope_from_filter

    return scope_from_filter(filter_ or None)


def search(
    retrieval: Any,
    query: str,
    filter_: Filter | Mapping[str, Any] | None,
    limit: int,
    now_epoch: float | None,
) -> dict[str, Any]:
    """The plane's four-arm search: ``{sha, hits, arms, degraded, took_ms, …}``."""
    sha = indexed_sha(retrieval.db.conn)
    result = retrieval.search(query, scope_of(filter_), limit, now_epoch)
    wire: dict[str, Any] = result.to_wire()
    return {"sha": sha, "plane": "index", **wire}


def recall(
    retrieval: Any,
    query: str,
    filter_: Filter | Mapping[str, Any] | None,
    budget_chars: int | None,
    now_epoch: float | None,
    ranked: Any = None,
) -> dict[str, Any]:
    """The disclosure pack ``{entries, index_lines, spent, truncated, …}`` plus ``sha``;
    ``ranked`` (a ``headd_plane.recall.RankedPool``) is the head search's ranking to fold."""
    from headd_plane.recall import recall as fold_recall

    sha = indexed_sha(retrieval.db.conn)
    pack = fold_recall(retrieval, query, scope_of(filter_), budget_chars, now_epoch, ranked)
    return {"sha": sha, **pack.to_wire()}


# -- state --------------------------------------------------------------------------------------


def reinforce(
    conn: sqlite3.Connection, paths: Iterable[str], signal: str, now: datetime
) -> dict[str, Any]:
    from headd_plane.state import reinforce as bump

    result = bump(conn, [p.lstrip("/") for p in paths], signal, now)
    return {"bumped": result["bumped"], "cooled_down": result["cooled_down"]}


def state_export(conn: sqlite3.Connection, store: Path) -> dict[str, Any]:
    from headd_plane.sidecar import export_sidecar

    return dict(export_sidecar(conn, store))


def state_import(conn: sqlite3.Connection, store: Path) -> dict[str, Any]:
    from headd_plane.sidecar import import_sidecar

    return dict(import_sidecar(conn, store))


# -- traces -------------------------------------------------------------------------------------


def traces_index(conn: sqlite3.Connection, root: Path, now: datetime) -> dict[str, Any]:
    from headd_plane.traces import traces_index as scan

    report = dict(scan(conn, root, now))
    report["trace_root"] = str(root)
    return report


def traces_search(conn: sqlite3.Connection, query: str, limit: int) -> dict[str, Any]:
    from headd_plane.traces import traces_search as find

    return find(conn, query, limit)


def traces_show(conn: sqlite3.Connection, session: str) -> dict[str, Any]:
    """One transcript session with its prompts and linked memories.

    A session that wrote memories before its transcript was indexed (or on a machine without
    it) still has its ``memory_session_links`` rows, which have no foreign key to ``traces`` on
    purpose; it is shown with ``indexed: false`` and those memories rather than refused, so
    provenance recorded at write time is never unreachable.
    """
    from headd_plane.traces import traces_show as show

    try:
        found = show(conn, session)
    except SessionNotFound:
        memories = _links_of(conn, session)
        if not memories:
            raise
        return {
            "session_id": session,
            "indexed": False,
            "prompts": [],
            "memories": memories,
            "files": [],
            "missing": False,
        }
    return {**found, "indexed": True}


def _links_of(conn: sqlite3.Connection, session: str) -> list[dict[str, Any]]:
    cur = conn.execute(
        """SELECT path, link_kind, prompt_id, turn_uuid, at FROM memory_session_links
           WHERE session_id = ? ORDER BY at, path, link_kind""",
        (session,),
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, tuple(r), strict=True)) for r in cur]


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
