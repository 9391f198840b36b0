"""The trace and state tables headd creates are memhtml 0.15.1's, column for column, so a store's
index.db stays readable by either tool (compared with the index.db memhtml itself wrote)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from headd_plane.db import STATE_MIGRATIONS_DIR, open_writer
from support.data import anchor_index

TABLES = ["traces", "trace_prompts", "memory_session_links", "trace_consolidations"]


def _shape(conn: sqlite3.Connection, table: str) -> tuple[object, ...]:
    columns = [tuple(r) for r in conn.execute(f"PRAGMA table_xinfo({table})")]
    indexes = sorted(
        (r[1], r[2], tuple(c[2] for c in conn.execute(f"PRAGMA index_info('{r[1]}')")))
        for r in conn.execute(f"PRAGMA index_list({table})")
    )
    fks = [tuple(r) for r in conn.execute(f"PRAGMA foreign_key_list({table})")]
    triggers = sorted(
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,)
        )
    )
    return (columns, indexes, fks, triggers)


@pytest.mark.parametrize("table", TABLES)
def test_trace_tables_match_memhtmls(table: str, tmp_path: Path) -> None:
    ours = open_writer(tmp_path / "index.db", None)
    theirs = anchor_index()
    try:
        assert _shape(ours.conn, table) == _shape(theirs, table)
    finally:
        ours.close()
        theirs.close()


def test_fts_table_definition_matches(tmp_path: Path) -> None:
    ours = open_writer(tmp_path / "index.db", None)
    theirs = anchor_index()
    try:
        query = "SELECT sql FROM sqlite_master WHERE name = 'traces_fts'"
        assert ours.conn.execute(query).fetchone()[0] == theirs.execute(query).fetchone()[0]
    finally:
        ours.close()
        theirs.close()


def test_state_tables_have_memhtmls_columns(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"ATTACH DATABASE '{tmp_path / 'state.db'}' AS state")
    for sql in sorted(STATE_MIGRATIONS_DIR.glob("S*.sql")):
        conn.executescript(sql.read_text())
    names = {
        t: [r[1] for r in conn.execute(f"PRAGMA state.table_info({t})")]
        for t in ("access", "edge_corroboration", "entity_corroboration")
    }
    assert names["access"] == [
        "path",
        "access_count",
        "reinforcement_count",
        "outcome_score",
        "last_accessed_at",
        "last_reinforced_at",
        "updated_at",
    ]
    assert names["edge_corroboration"] == [
        "src_path",
        "rel",
        "dst_path",
        "detections",
        "confirmed",
        "promoted",
        "updated_at",
    ]
    assert names["entity_corroboration"][:3] == ["entity_type", "alias_name", "canonical_name"]
    with pytest.raises(sqlite3.IntegrityError):  # the CHECK keeps the EWMA in range
        conn.execute(
            "INSERT INTO state.access (path, outcome_score, updated_at) VALUES ('p', 1.5, 'x')"
        )
    conn.close()
