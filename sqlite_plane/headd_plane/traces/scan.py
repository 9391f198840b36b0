"""``traces_index``: bring the trace plane up to date with a transcript root, reading only what
changed since the last scan.

Two phases. First every discovered file is planned against its watermark and the changed ones
are read (no database lock is held while reading, which is most of the time). Then one
transaction stores each changed file's extract and watermark, marks files that disappeared, and
reassembles every session any of those touched. A crash before the commit leaves the old
watermarks, so the next scan simply reads the same bytes again.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import TypedDict

import msgspec

from headd.errors import StorageFailure
from headd_plane.state import iso_ms, transaction
from headd_plane.traces import store
from headd_plane.traces.discover import PROJECTS_DIR, FoundFile, discover
from headd_plane.traces.extract import FileExtract, merge_tail
from headd_plane.traces.reader import read_from
from headd_plane.traces.watermark import Watermark, advance, plan_read

log = logging.getLogger(__name__)

TRACE_ROOT_ENV = "MEMHTML_TRACE_ROOT"


class IndexReport(TypedDict):
    files_seen: int
    files_read: int
    files_skipped: int
    bytes_read: int
    sessions: int
    prompts: int
    bad_lines: int
    files_missing: int
    tailed: int
    rescanned: int


class _Change(msgspec.Struct):
    row: store.FileRow
    extract: FileExtract
    watermark: Watermark
    old_session: str | None


def default_trace_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--trace-root``, else ``$MEMHTML_TRACE_ROOT``, else ``~/.claude``."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(TRACE_ROOT_ENV)
    if env:
        return Path(env).expanduser()
    return Path("~/.claude").expanduser()


def _read_change(
    conn: sqlite3.Connection,
    found: FoundFile,
    prev: Watermark | None,
    known: store.KnownFile | None,
) -> tuple[_Change, int, str, int] | None:
    """Plan and read one changed file. None for a file that vanished before it was read."""
    plan = plan_read(prev, found.size, found.mtime_ms)
    stored = store.load_extract(conn, found.path) if plan.action == "tail" and known else None
    action = plan.action
    start = plan.start
    if action == "tail" and stored is None:
        # A watermark without headd's per-file extract (e.g. written by memhtml itself): the
        # slice alone cannot rebuild the session, so read the whole file.
        action, start = "rescan", 0
    try:
        result = read_from(found.path, start, found.size)
    except OSError as exc:
        log.warning("traces: %s vanished or unreadable: %s", found.path, exc.strerror)
        return None
    extract = merge_tail(stored, result.extract) if stored is not None else result.extract
    old_session = known.session_id if known else None
    session = found.session_hint or extract.session_id or old_session
    row = store.FileRow(found.path, session, found.slug, found.kind, found.agent_id, None)
    mark = advance(found.size, found.mtime_ms, start, result.consumed)
    change = _Change(row, extract, mark, old_session)
    return change, result.consumed, action, result.extract.counters.bad


def traces_index(
    conn: sqlite3.Connection, root: str | os.PathLike[str], now: datetime
) -> IndexReport:
    """Scan ``root`` (a ``~/.claude``-like directory holding ``projects/``) into the trace plane.

    Unchanged files are not opened; appended files are read from their offset and merged into
    the stored file state; shrunk or rewritten ones are read again. ``bad_lines`` counts lines
    read in this scan that were not JSON objects with a type. A file gone from disk keeps its
    session row and is marked missing (``traces_show`` reports it).
    """
    root_abs = os.path.abspath(os.fspath(root))
    prefix = os.path.join(root_abs, PROJECTS_DIR) + os.sep
    at = iso_ms(now)
    try:
        store.ensure_schema(conn)
        found = discover(root_abs)
        known = store.load_known(conn, prefix)
        marks: dict[str, Watermark] | None = None  # memhtml's watermarks, read only if needed
    except sqlite3.Error as exc:
        raise StorageFailure("traces index failed", {"operation": "traces.index"}) from exc

    changes: list[_Change] = []
    reappeared: list[str] = []
    files_read = bytes_read = bad = tailed = rescanned = 0
    for f in found:
        k = known.get(f.path)
        if k is not None:
            if k.size == f.size and k.mtime_ms == f.mtime_ms:
                # Unchanged: not opened (the common case, kept free of any other work).
                if k.missing_at is not None:
                    reappeared.append(f.path)
                continue
            prev: Watermark | None = Watermark(k.size, k.mtime_ms, k.byte_off)
        else:
            if marks is None:
                marks = store.load_watermarks(conn, prefix)
            prev = marks.get(f.path)
            if prev is not None and prev.size == f.size and prev.mtime_ms == f.mtime_ms:
                continue
        outcome = _read_change(conn, f, prev, k)
        if outcome is None:
            continue
        change, consumed, action, bad_here = outcome
        changes.append(change)
        files_read += 1
        bytes_read += consumed
        bad += bad_here
        if action == "tail":
            tailed += 1
        else:
            rescanned += 1

    present = {f.path for f in found}
    gone = [
        (p, k.session_id) for p, k in known.items() if p not in present and k.missing_at is None
    ]

    touched: set[str] = set()
    prompts = 0
    if changes or gone or reappeared:  # an unchanged tree takes no write lock at all
        stats = {f.path: (f.size, f.mtime_ms) for f in found}
        try:
            with transaction(conn):
                touched, prompts = _write(conn, changes, gone, reappeared, at, known, stats)
        except sqlite3.Error as exc:
            raise StorageFailure("traces index failed", {"operation": "traces.index"}) from exc

    report: IndexReport = {
        "files_seen": len(found),
        "files_read": files_read,
        "files_skipped": len(found) - files_read,
        "bytes_read": bytes_read,
        "sessions": len(touched),
        "prompts": prompts,
        "bad_lines": bad,
        "files_missing": len(gone),
        "tailed": tailed,
        "rescanned": rescanned,
    }
    log.info("traces.index %s: %s", root_abs, report)
    return report


def _write(
    conn: sqlite3.Connection,
    changes: list[_Change],
    gone: list[tuple[str, str | None]],
    reappeared: list[str],
    at: str,
    known: dict[str, store.KnownFile],
    stats: dict[str, tuple[int, int]],
) -> tuple[set[str], int]:
    """Store the changed files and reassemble every session they touch (in one transaction)."""
    store.write_files(conn, [(c.row, c.extract, c.watermark) for c in changes], at)
    touched: set[str] = set()
    for c in changes:
        touched.update(s for s in (c.row.session_id, c.old_session) if s)
    for path, session_id in gone:
        store.set_missing(conn, path, at)
        if session_id:
            touched.add(session_id)
    for path in reappeared:
        store.set_missing(conn, path, None)

    # Every file of each touched session: this scan's extracts in hand, the others from the table.
    members: dict[str, dict[str, store.Part]] = {sid: {} for sid in touched}
    for c in changes:
        r = c.row
        if r.session_id is not None and r.session_id in members:
            part = store.Part(r.file_path, r.kind, r.agent_id, r.slug, c.extract)
            members[r.session_id][r.file_path] = part
    for path, k in known.items():
        group = members.get(k.session_id) if k.session_id else None
        if group is None or path in group:
            continue
        stored = store.load_extract(conn, path)
        if stored is not None:
            group[path] = store.Part(path, k.kind, k.agent_id, k.slug, stored)

    rows: list[tuple[object, ...]] = []
    prompts: list[tuple[object, ...]] = []
    for session_id in sorted(touched):
        parts = sorted(members[session_id].values(), key=lambda p: (p.kind != "session", p.path))
        if not parts:
            continue
        owner = store.owner_of(parts)
        size, mtime_ms = stats.get(owner.path) or _stored_stat(known, owner.path)
        row, prompt_rows = store.assemble(session_id, parts, (size, store.ms_to_iso(mtime_ms)), at)
        rows.append(row)
        prompts.extend(prompt_rows)
    store.write_sessions(conn, rows, prompts)
    return touched, len(prompts)


def _stored_stat(known: dict[str, store.KnownFile], path: str) -> tuple[int, int]:
    k = known.get(path)
    return (k.size, k.mtime_ms) if k is not None else (0, 0)
