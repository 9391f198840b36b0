"""The state plane's committed sidecar, ``.memhtml/state/access.jsonl``, in memhtml 0.15.1's bytes.

``state.db`` is not rebuildable from git, so this file is its only durable copy and the way state
moves between machines and to or from memhtml itself. Two properties matter:

- **Byte-stable export.** Rows come path-ordered from SQL, the outcome score is rounded to four
  decimals (the grid the EWMA lives on) with ``-0`` written as ``0``, keys go in a fixed order and
  numbers are written as JavaScript's ``JSON.stringify`` writes them. An unchanged plane therefore
  renders identical bytes, and exporting it twice commits nothing; memhtml's export of the same
  rows is the same file.
- **Export merges, never overwrites.** The file on disk may hold rows headd did not write
  (memhtml's own ``reinforce`` then ``state export``, another machine's import). Export merges
  them with ``state.access`` by the import's rule (larger count, later stamp; the score of the
  row updated last) and keeps every row only the file holds, so exporting never drops a bump.
  Instants are written in memhtml's form, whole seconds and ``Z`` (``2026-12-01T22:19:29Z``);
  headd's millisecond stamps are cut to the second.
- **Forgiving import.** A line that does not parse, or holds a count ``state.access`` cannot
  (negative, fractional, beyond 64 bits), is refused by its line number and reason and skipped,
  never fatal, so a file truncated by an interrupted write, or one a collaborator pushed with a
  bad row, still restores every other row it holds. Rows merge into a live
  plane by taking the larger of each monotone counter and the later of each stamp, so an import
  never loses a bump that happened after the export.

The format's pure half (``render_sidecar``, ``parse_sidecar``, ``merge_entries``) is
``headd.memfile.sidecar``; ``export_sidecar``/``import_sidecar`` here are the thin I/O wrappers
``headctl state export|import`` and the daemon call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from headd.errors import StorageFailure
from headd.memfile.sidecar import (
    STATE_SIDECAR_PATH,
    RefusedRow,
    SidecarEntry,
    merge_entries,
    parse_sidecar,
    render_sidecar,
    round4,
)
from headd_plane.state import STATE_SCHEMA, has_state, transaction


class ExportReport(TypedDict):
    path: str
    rows: int
    bytes: int
    written: bool


class ImportReport(TypedDict):
    path: str
    rows: int
    restored: int
    skipped: int
    has_state: bool
    #: Each line not imported.
    refused: list[RefusedRow]


def entry_from_row(row: Sequence[Any]) -> SidecarEntry:
    """A ``state.access`` row (columns in table order) as an entry, score on the grid."""
    path, access, reinforcement, score, last_accessed, last_reinforced, updated = row
    return SidecarEntry(
        path=path,
        accessCount=access,
        reinforcementCount=reinforcement,
        outcomeScore=round4(float(score)),
        lastAccessedAt=last_accessed,
        lastReinforcedAt=last_reinforced,
        updatedAt=updated,
    )


def access_entries(conn: sqlite3.Connection) -> list[SidecarEntry]:
    """Every ``state.access`` row as an entry, ordered by path in SQL (so the file is stable)."""
    if not has_state(conn):
        return []
    rows = conn.execute(
        f"""SELECT path, access_count, reinforcement_count, outcome_score,
                   last_accessed_at, last_reinforced_at, updated_at
            FROM {STATE_SCHEMA}.access ORDER BY path ASC"""
    ).fetchall()
    return [entry_from_row(r) for r in rows]


def export_sidecar(conn: sqlite3.Connection, store_root: Path) -> ExportReport:
    """Merge ``state.access`` into the sidecar under ``store_root`` (``merge_entries``) and
    write it when its bytes would change; never commit.

    ``written`` is False when the file already held exactly these bytes, so a caller that
    commits the file (``headctl state export``) has nothing to commit.
    """
    target = store_root / STATE_SIDECAR_PATH
    try:
        existing = target.read_bytes() if target.exists() else None
    except OSError as exc:
        raise StorageFailure("state export failed", {"operation": "state.export"}) from exc
    on_disk = parse_sidecar(existing.decode("utf-8", errors="replace")).entries if existing else ()
    contents = render_sidecar(merge_entries(on_disk, access_entries(conn))).encode("utf-8")
    rows = contents.count(b"\n")
    try:
        written = existing != contents
        if written:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(contents)
            tmp.replace(target)
    except OSError as exc:
        raise StorageFailure("state export failed", {"operation": "state.export"}) from exc
    return {"path": STATE_SIDECAR_PATH, "rows": rows, "bytes": len(contents), "written": written}


_IMPORT_SQL = f"""
    INSERT INTO {STATE_SCHEMA}.access
      (path, access_count, reinforcement_count, outcome_score,
       last_accessed_at, last_reinforced_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(path) DO UPDATE SET
      access_count = max(access_count, excluded.access_count),
      reinforcement_count = max(reinforcement_count, excluded.reinforcement_count),
      outcome_score = excluded.outcome_score,
      last_accessed_at = nullif(max(coalesce(last_accessed_at, ''),
                                    coalesce(excluded.last_accessed_at, '')), ''),
      last_reinforced_at = nullif(max(coalesce(last_reinforced_at, ''),
                                      coalesce(excluded.last_reinforced_at, '')), ''),
      updated_at = excluded.updated_at
"""


def import_entries(conn: sqlite3.Connection, entries: Sequence[SidecarEntry]) -> int:
    """Merge entries into ``state.access`` in one transaction; return rows written.

    Counts merge by max (they only grow, so max cannot lose a bump), stamps by the later one;
    the outcome score and ``updated_at`` take the file's value, as memhtml's import does.
    """
    if not entries or not has_state(conn):
        return 0
    try:
        with transaction(conn):
            conn.executemany(
                _IMPORT_SQL,
                [
                    (
                        e.path,
                        e.accessCount,
                        e.reinforcementCount,
                        e.outcomeScore,
                        e.lastAccessedAt,
                        e.lastReinforcedAt,
                        e.updatedAt,
                    )
                    for e in entries
                ],
            )
    except sqlite3.Error as exc:
        raise StorageFailure("state import failed", {"operation": "state.import"}) from exc
    return len(entries)


def import_sidecar(conn: sqlite3.Connection, store_root: Path) -> ImportReport:
    """Replay ``store_root``'s sidecar into ``state.access``; a missing file restores nothing."""
    target = store_root / STATE_SIDECAR_PATH
    try:
        raw = target.read_bytes() if target.exists() else None
    except OSError as exc:
        raise StorageFailure("state import failed", {"operation": "state.import"}) from exc
    state = has_state(conn)
    if raw is None:
        return {
            "path": STATE_SIDECAR_PATH,
            "rows": 0,
            "restored": 0,
            "skipped": 0,
            "has_state": state,
            "refused": [],
        }
    parsed = parse_sidecar(raw.decode("utf-8", errors="replace"))
    restored = import_entries(conn, parsed.entries) if state else 0
    return {
        "path": STATE_SIDECAR_PATH,
        "rows": len(parsed.entries),
        "restored": restored,
        "skipped": parsed.skipped,
        "has_state": state,
        "refused": list(parsed.refused),
    }
