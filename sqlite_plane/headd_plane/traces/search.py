"""``traces_search`` and ``traces_show``: reading the trace plane back.

Search ranks sessions by FTS5 bm25 over ``first_prompt`` and ``ai_title``. The caller's text is
reduced to lowercased runs of letters and digits, each quoted, because FTS5 syntax (an
apostrophe, a hyphen, a bare ``AND``) would otherwise fail the statement; every term must match,
and when no session holds them all, any term may. Trace search never touches memory retrieval.
"""

from __future__ import annotations

import re
import sqlite3

from headd.errors import SessionNotFound
from headd.wire.plane_answers import (
    TRACE_ROW_FIELDS,
    SessionMemory,
    TraceHit,
    TracePrompt,
    TracesSearchAnswer,
    TracesShowAnswer,
)
from headd_plane.traces import store

_TERM = re.compile(r"[^\W_]+")

HIT_COLUMNS = TraceHit.__struct_fields__
_HIT_SELECT = ", ".join(f"t.{c}" for c in HIT_COLUMNS)


def trace_query_terms(query: str) -> list[str]:
    """The query's searchable terms, lowercased, in order, without repeats."""
    return list(dict.fromkeys(m.group(0).lower() for m in _TERM.finditer(query)))


def _match(terms: list[str], joiner: str) -> str:
    return f" {joiner} ".join(f'"{t}"' for t in terms)


def traces_search(conn: sqlite3.Connection, query: str, limit: int = 10) -> TracesSearchAnswer:
    """``{hits: [...]}`` best first; an empty query lists the most recent sessions."""
    limit = max(1, int(limit))
    terms = trace_query_terms(query)
    if not terms:
        rows = conn.execute(
            f"SELECT {_HIT_SELECT} FROM traces t"
            " ORDER BY coalesce(t.ended_at, '') DESC, t.session_id LIMIT ?",
            (limit,),
        ).fetchall()
        return TracesSearchAnswer([TraceHit(*r) for r in rows])
    sql = (
        f"SELECT {_HIT_SELECT} FROM traces_fts JOIN traces t ON t.rowid = traces_fts.rowid"
        " WHERE traces_fts MATCH ? ORDER BY bm25(traces_fts), t.session_id LIMIT ?"
    )
    rows = conn.execute(sql, (_match(terms, "AND"), limit)).fetchall()
    if not rows and len(terms) > 1:
        rows = conn.execute(sql, (_match(terms, "OR"), limit)).fetchall()
    return TracesSearchAnswer([TraceHit(*r) for r in rows])


def _resolve(conn: sqlite3.Connection, session: str) -> str:
    """An exact session id, or a unique prefix of at least 4 characters of one."""
    if conn.execute("SELECT 1 FROM traces WHERE session_id = ?", (session,)).fetchone():
        return session
    if len(session) >= 4:
        rows = conn.execute(
            "SELECT session_id FROM traces WHERE session_id >= ? AND session_id < ? LIMIT 2",
            (session, session + "\uffff"),
        ).fetchall()
        if len(rows) == 1:
            return str(rows[0][0])
    raise SessionNotFound("no indexed transcript session has this id", {"session": session})


def traces_show(conn: sqlite3.Connection, session: str) -> TracesShowAnswer:
    """One session: its ``traces`` columns, its prompts, the memories linked to it, its files.

    ``missing`` is true when its main transcript is gone from disk (the row is kept).
    """
    session_id = _resolve(conn, session)
    row = conn.execute(
        f"SELECT {', '.join(TRACE_ROW_FIELDS)} FROM traces WHERE session_id = ?", (session_id,)
    ).fetchone()
    prompts = [
        TracePrompt(*r)
        for r in conn.execute(
            """SELECT prompt_id, turn_uuid, ordinal, at, agent_id, text_head FROM trace_prompts
               WHERE session_id = ? ORDER BY ordinal""",
            (session_id,),
        )
    ]
    files = store.session_files(conn, session_id)
    file_path = row[TRACE_ROW_FIELDS.index("file_path")]
    main = next((f for f in files if f.path == file_path), None)
    return TracesShowAnswer(
        **dict(zip(TRACE_ROW_FIELDS, row, strict=True)),
        prompts=prompts,
        memories=session_memories(conn, session_id),
        files=files,
        missing=main is not None and main.missing_at is not None,
        indexed=True,
    )


def session_memories(conn: sqlite3.Connection, session_id: str) -> list[SessionMemory]:
    """The memories linked to ``session_id`` (``memory_session_links``), oldest link first."""
    return [
        SessionMemory(*r)
        for r in conn.execute(
            """SELECT path, link_kind, prompt_id, turn_uuid, at FROM memory_session_links
               WHERE session_id = ? ORDER BY at, path, link_kind""",
            (session_id,),
        )
    ]
