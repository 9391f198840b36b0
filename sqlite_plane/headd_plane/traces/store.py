"""The trace plane's SQL: per-file state, watermarks, and the assembled session rows.

``traces``/``trace_prompts``/``trace_watermarks`` are memhtml 0.15.1's tables, written in its
formats (ISO-8601 text for instants, mtime included). They hold one row per *session*, but a
session is several files (its main transcript and its subagents' sidecars), and a file can be
rescanned alone. memhtml upserts each file's extract straight into the session row, so the last
file scanned wins its columns. headd instead keeps each file's own extract in
``headd_trace_files`` (a table of its own, created here, never read by memhtml) and assembles
the session row from all of its files every time one of them changes. That makes a rescan of one
file exact (its old contribution is replaced, not summed twice), lets a subagent file that
arrives after its session join it, and lets a transcript deleted from disk keep its row while
being marked (``missing_at``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec

from headd.wire.plane_answers import TraceFile
from headd_plane.traces.extract import FileExtract, PromptRow
from headd_plane.traces.watermark import Watermark

FILES_TABLE = "headd_trace_files"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {FILES_TABLE} (
  file_path  TEXT PRIMARY KEY,
  -- NULL for a file none of whose records names a session (then it feeds no row).
  session_id TEXT,
  slug       TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('session','subagent','flat_agent')),
  agent_id   TEXT,
  -- The file's FileExtract as msgspec JSON: what the next tail merges into.
  extract    BLOB NOT NULL,
  -- Set when a scan no longer finds the file (the session row it fed stays).
  missing_at TEXT,
  -- The watermark again, as integers: trace_watermarks keeps memhtml's ISO text, and an
  -- unchanged rescan compares these without parsing a date per file.
  size       INTEGER NOT NULL DEFAULT 0,
  mtime_ms   INTEGER NOT NULL DEFAULT 0,
  byte_off   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS {FILES_TABLE}_session ON {FILES_TABLE} (session_id);
"""

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(FileExtract)


class FileRow(msgspec.Struct, frozen=True):
    file_path: str
    session_id: str | None
    slug: str
    kind: str
    agent_id: str | None
    missing_at: str | None


class KnownFile(NamedTuple):
    """What the table remembers of a file, read for every file on every scan (kept a tuple)."""

    session_id: str | None
    missing_at: str | None
    size: int
    mtime_ms: int
    byte_off: int
    slug: str
    kind: str
    agent_id: str | None


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create headd's own per-file table if this index.db does not have it yet."""
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def ms_to_iso(mtime_ms: int) -> str:
    """Epoch milliseconds as the ISO text the watermark column stores (``toISOString``'s form)."""
    seconds, ms = divmod(mtime_ms, 1000)
    days, rest = divmod(seconds, 86400)
    y, m, d = _civil_from_days(days)
    hh, rest = divmod(rest, 3600)
    mm, ss = divmod(rest, 60)
    return f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{ms:03d}Z"


def _civil_from_days(z: int) -> tuple[int, int, int]:
    """The proleptic Gregorian date ``z`` days after 1970-01-01 (H. Hinnant's algorithm)."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def iso_to_ms(text: str) -> int:
    """ISO text back to epoch milliseconds (the canonical ``…T…​.mmmZ`` form parsed directly:
    an unchanged rescan converts one per file)."""
    if len(text) == 24 and text[23] == "Z" and text[19] == ".":
        days = _days_from_civil(int(text[0:4]), int(text[5:7]), int(text[8:10]))
        seconds = days * 86400 + int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
        return seconds * 1000 + int(text[20:23])
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    whole = int(moment.replace(microsecond=0).timestamp()) * 1000
    return whole + moment.microsecond // 1000


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _under(prefix: str) -> tuple[str, str]:
    """A [lo, hi) range selecting every path that starts with ``prefix`` (index-friendly)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def load_watermarks(conn: sqlite3.Connection, prefix: str) -> dict[str, Watermark]:
    lo, hi = _under(prefix)
    out: dict[str, Watermark] = {}
    cur = conn.cursor()
    cur.row_factory = None
    for path, size, mtime, off in cur.execute(
        "SELECT file_path, size, mtime, byte_off FROM trace_watermarks"
        " WHERE file_path >= ? AND file_path < ?",
        (lo, hi),
    ):
        try:
            out[path] = Watermark(size=size, mtime_ms=iso_to_ms(mtime), byte_off=off)
        except ValueError:
            continue  # an unreadable stamp: the file is simply rescanned
    return out


def load_known(conn: sqlite3.Connection, prefix: str) -> dict[str, KnownFile]:
    lo, hi = _under(prefix)
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples whatever the connection's factory: 5,000 rows a scan
    rows = cur.execute(
        f"""SELECT file_path, session_id, missing_at, size, mtime_ms, byte_off, slug, kind,
                   agent_id
            FROM {FILES_TABLE} WHERE file_path >= ? AND file_path < ?""",
        (lo, hi),
    )
    return {r[0]: KnownFile(*r[1:]) for r in rows}


def load_extract(conn: sqlite3.Connection, file_path: str) -> FileExtract | None:
    row = conn.execute(
        f"SELECT extract FROM {FILES_TABLE} WHERE file_path = ?", (file_path,)
    ).fetchone()
    return None if row is None else _DECODER.decode(row[0])


_UPSERT_FILE = f"""
    INSERT INTO {FILES_TABLE} (file_path, session_id, slug, kind, agent_id, extract,
      missing_at, size, mtime_ms, byte_off)
    VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)
    ON CONFLICT(file_path) DO UPDATE SET session_id = excluded.session_id,
      slug = excluded.slug, kind = excluded.kind, agent_id = excluded.agent_id,
      extract = excluded.extract, missing_at = NULL, size = excluded.size,
      mtime_ms = excluded.mtime_ms, byte_off = excluded.byte_off
"""
_UPSERT_WATERMARK = """
    INSERT INTO trace_watermarks (file_path, size, mtime, byte_off, scanned_at)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT(file_path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
      byte_off = excluded.byte_off, scanned_at = excluded.scanned_at
"""


def write_files(
    conn: sqlite3.Connection,
    items: Sequence[tuple[FileRow, FileExtract, Watermark]],
    scanned_at: str,
) -> None:
    """Store files' extracts and watermarks (inside the caller's transaction)."""
    conn.executemany(
        _UPSERT_FILE,
        [
            (
                row.file_path,
                row.session_id,
                row.slug,
                row.kind,
                row.agent_id,
                _ENCODER.encode(extract),
                mark.size,
                mark.mtime_ms,
                mark.byte_off,
            )
            for row, extract, mark in items
        ],
    )
    conn.executemany(
        _UPSERT_WATERMARK,
        [
            (row.file_path, mark.size, ms_to_iso(mark.mtime_ms), mark.byte_off, scanned_at)
            for row, _, mark in items
        ],
    )


def set_missing(conn: sqlite3.Connection, file_path: str, missing_at: str | None) -> None:
    conn.execute(
        f"UPDATE {FILES_TABLE} SET missing_at = ? WHERE file_path = ?", (missing_at, file_path)
    )


class Part(msgspec.Struct, frozen=True):
    """One file of a session, with its extract, as the assembly reads it."""

    path: str
    kind: str
    agent_id: str | None
    slug: str
    extract: FileExtract


def _first(values: Iterable[str | None]) -> str | None:
    for value in values:
        if value:
            return value
    return None


_UPSERT_TRACE = """
    INSERT INTO traces (
      session_id, slug, cwd, git_branch, entrypoint, model, version, started_at, ended_at,
      prompt_count, turn_count, agent_count, first_prompt, ai_title, file_path, file_size,
      file_mtime, search_text, indexed_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(session_id) DO UPDATE SET
      slug = excluded.slug, cwd = excluded.cwd, git_branch = excluded.git_branch,
      entrypoint = excluded.entrypoint, model = excluded.model, version = excluded.version,
      started_at = excluded.started_at, ended_at = excluded.ended_at,
      prompt_count = excluded.prompt_count, turn_count = excluded.turn_count,
      agent_count = excluded.agent_count, first_prompt = excluded.first_prompt,
      ai_title = excluded.ai_title, file_path = excluded.file_path,
      file_size = excluded.file_size, file_mtime = excluded.file_mtime,
      search_text = excluded.search_text, indexed_at = excluded.indexed_at
"""
_INSERT_PROMPT = """
    INSERT INTO trace_prompts (session_id, prompt_id, turn_uuid, ordinal, at, agent_id, text_head)
    VALUES (?, ?, ?, ?, ?, ?, ?)
"""


def assemble(
    session_id: str, parts: Sequence[Part], owner_stat: tuple[int, str], indexed_at: str
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """A session's ``traces`` row and ``trace_prompts`` rows from all of its files (pure).

    The main transcript (``kind = 'session'``) owns the identity fields, the first prompt, the
    title, the turn count and the model; subagent files add their agents, widen the times and
    add their own prompts after the main file's. ``owner_stat`` is the owner file's size and
    ISO mtime.
    """
    mains = [p for p in parts if p.kind == "session"]
    owner = mains[0] if mains else parts[0]
    ordered = [owner, *[p for p in parts if p is not owner]]
    ex = [p.extract for p in ordered]

    agents: dict[str, None] = {}
    for part in ordered:
        agents.update(dict.fromkeys(part.extract.agent_ids))
        if part.kind != "session" and part.agent_id:
            agents[part.agent_id] = None
    starts = [e.started_at for e in ex if e.started_at]
    ends = [e.ended_at for e in ex if e.ended_at]
    model = owner.extract.model()
    if model is None:
        combined = FileExtract()
        for e in ex:
            for name, count in e.model_counts.items():
                combined.model_counts[name] = combined.model_counts.get(name, 0) + count
        model = combined.model()
    turns = sum(p.extract.turn_count for p in mains) if mains else sum(e.turn_count for e in ex)

    prompts: list[PromptRow] = []
    seen: set[str] = set()
    for e in ex:
        for prompt in e.prompts():
            if prompt.prompt_id not in seen:
                seen.add(prompt.prompt_id)
                prompts.append(prompt)
    first_prompt = _first(e.first_prompt for e in ex) or ""
    ai_title = _first(e.ai_title for e in ex)
    search_text = "\n".join(x for x in (first_prompt, ai_title or "") if x)
    row = (
        session_id,
        owner.slug,
        _first(e.cwd for e in ex),
        _first(e.git_branch for e in ex),
        _first(e.entrypoint for e in ex),
        model,
        _first(e.version for e in ex),
        min(starts) if starts else None,
        max(ends) if ends else None,
        len(prompts),
        turns,
        len(agents),
        first_prompt,
        ai_title,
        owner.path,
        owner_stat[0],
        owner_stat[1],
        search_text,
        indexed_at,
    )
    prompt_rows = [
        (session_id, p.prompt_id, p.turn_uuid, i, p.at, p.agent_id, p.text_head)
        for i, p in enumerate(prompts)
    ]
    return row, prompt_rows


def owner_of(parts: Sequence[Part]) -> Part:
    """The file whose path and stat the session row cites: its main transcript if it has one."""
    return next((p for p in parts if p.kind == "session"), parts[0])


def write_sessions(
    conn: sqlite3.Connection,
    rows: Sequence[tuple[Any, ...]],
    prompts: Sequence[tuple[Any, ...]],
) -> None:
    """Upsert session rows and replace their prompts (inside the caller's transaction)."""
    conn.executemany(_UPSERT_TRACE, rows)
    conn.executemany("DELETE FROM trace_prompts WHERE session_id = ?", [(r[0],) for r in rows])
    conn.executemany(_INSERT_PROMPT, prompts)


def session_files(conn: sqlite3.Connection, session_id: str) -> list[TraceFile]:
    """The files feeding one session, for ``traces_show`` (none when headd never scanned it, e.g.
    an index.db written by memhtml, which has no ``headd_trace_files``)."""
    out: list[TraceFile] = []
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FILES_TABLE,)
    ).fetchone()
    if exists is None:
        return out
    for part, missing in (
        (Part(p, k, a, "", _DECODER.decode(blob)), m)
        for p, k, a, blob, m in conn.execute(
            f"""SELECT file_path, kind, agent_id, extract, missing_at FROM {FILES_TABLE}
                WHERE session_id = ? ORDER BY kind <> 'session', file_path""",
            (session_id,),
        )
    ):
        c = part.extract.counters
        out.append(
            TraceFile(
                path=part.path,
                kind=part.kind,
                agent_id=part.agent_id,
                turns=part.extract.turn_count,
                prompts=len(part.extract.prompts()),
                first_prompt=part.extract.first_prompt,
                bad_lines=c.bad,
                unknown_lines=c.unknown_type,
                missing_at=missing,
            )
        )
    return out
