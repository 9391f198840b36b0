"""index.db on disk: each body stored once, an old index migrated in place, a bounded log.

The lean schema (migration ``0100_lean_text.sql``) keeps memhtml 0.15.1's rows readable as they
were (``SELECT * FROM files`` / ``chunks``); these tests hold the pieces that make that true: the
generated ``fts_text`` is the parser's join, a chunk's span reads back its text, an index written
in memhtml's schema migrates without losing a row, a vector or a usage count, and neither a
rebuild nor a large transaction leaves a write-ahead log the size of the database.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import pytest
from headd_plane.chunking import PlaneChunk, chunk_id_for, utf16_len
from headd_plane.db import (
    COMPACT_MIN_FREE_PAGES,
    PAGE_SIZE_BYTES,
    WAL_SIZE_LIMIT_BYTES,
    Write,
    open_writer,
)
from headd_plane.paths import index_path_of, state_path_of
from headd_plane.plane import open_plane
from headd_plane.projection import chunk_span_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from support.data import ANCHOR, clone_anchor
from support.plane import fts_answers, rows

from headd.memfile.text import chunk_text, fts_text_of

NOW = "2026-11-30T10:00:00.000Z"
#: Queries whose full-text answers (rowids, bm25 scores, order) must survive the migration.
FTS_QUERIES = ("checkout", "deploy OR release", "test", "user NOT admin", "memory")

# Texts the parser can produce: any character but U+0000 (HTML drops or replaces it).
TEXT = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)))


def _wal(index: Path) -> int:
    wal = Path(f"{index}-wal")
    return wal.stat().st_size if wal.exists() else 0


def _all(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    return [tuple(r) for r in conn.execute(sql)]


@settings(max_examples=200, deadline=None)
@given(title=TEXT, gist=TEXT, body=TEXT)
def test_the_generated_fts_text_is_the_parsers_join(
    tmp_path_factory: pytest.TempPathFactory, title: str, gist: str, body: str
) -> None:
    db = open_writer(":memory:")
    db.conn.execute(
        "INSERT INTO files (path, blob_sha, content_hash, memory_type, title, body_text, gist, "
        "para, created_at, updated_at, indexed_at) "
        "VALUES ('areas/a.html', 'b', 'h', 'semantic', ?, ?, ?, 'areas', 'c', 'u', 'i')",
        (title, body, gist),
    )
    (stored,) = db.conn.execute("SELECT fts_text FROM files").fetchone()
    assert stored == fts_text_of(title, gist, body)
    db.close()


@settings(max_examples=150, deadline=None)
@given(body=TEXT, ceiling=st.integers(min_value=2, max_value=40), foreign=st.booleans())
def test_a_chunk_span_reads_back_its_text_through_the_view(
    body: str, ceiling: int, foreign: bool
) -> None:
    """Offsets are code points, SQLite's ``substr`` units, astral characters included; a chunk
    that is no slice of the body keeps its own text."""
    pieces = chunk_text(body, ceiling)
    if foreign:
        pieces.append(("\U0001f600 not in the body \ufffd" + body[:3], 99))
    chunks = tuple(
        PlaneChunk(chunk_id_for("h", i), i, text, utf16_len(text))
        for i, (text, _) in enumerate(pieces)
    )
    db = open_writer(":memory:")
    db.conn.execute(
        "INSERT INTO files (path, blob_sha, content_hash, memory_type, title, body_text, "
        "para, created_at, updated_at, indexed_at) "
        "VALUES ('areas/a.html', 'b', 'h', 'semantic', 't', ?, 'areas', 'c', 'u', 'i')",
        (body,),
    )
    spans = chunk_span_rows(body, "areas/a.html", "h", chunks)
    db.conn.executemany(
        "INSERT INTO chunk_spans VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        spans,
    )
    read = db.conn.execute("SELECT text, char_count FROM chunks ORDER BY ordinal").fetchall()
    assert [tuple(r) for r in read] == [(c.text, c.char_count) for c in chunks]
    if foreign:
        assert spans[-1][6] == chunks[-1].text  # kept as its own text
    db.close()


def _memhtml_store(tmp_path: Path) -> tuple[Path, Path]:
    """The anchor store with memhtml's own index.db (its schema, before migration 0100) as
    headd's, plus a vector, a session link and a usage row that no rebuild could bring back."""
    store = clone_anchor(tmp_path / "store")
    index = index_path_of(store)
    index.parent.mkdir(parents=True)
    shutil.copyfile(ANCHOR / "index.db", index)
    conn = sqlite3.connect(index)
    chunk = conn.execute("SELECT chunk_id FROM chunks ORDER BY chunk_id LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT INTO embeddings VALUES (?, 'hash-test@4', 4, ?, ?)", (chunk, b"\x00" * 16, NOW)
    )
    conn.commit()
    conn.close()
    state = sqlite3.connect(state_path_of(store))
    state.close()
    return store, index


def test_an_index_in_memhtmls_schema_migrates_in_place_losing_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store, index = _memhtml_store(tmp_path)
    old = sqlite3.connect(index)
    before_rows = rows(old)
    before_fts = fts_answers(old, FTS_QUERIES)
    before_links = _all(old, "SELECT * FROM memory_session_links")
    before_vectors = _all(old, "SELECT * FROM embeddings")
    before_bytes = index.stat().st_size
    old.close()

    caplog.set_level(logging.INFO, logger="headd_plane.db")
    plane = open_plane(store, now=lambda: NOW)
    plane.db.run("INSERT INTO state.access (path, updated_at) VALUES ('areas/x.html', 't')")
    assert "applied migration 0100_lean_text.sql" in caplog.text
    assert "index.db compacted" in caplog.text
    conn = plane.db.conn
    assert rows(conn) == before_rows
    assert fts_answers(conn, FTS_QUERIES) == before_fts
    assert _all(conn, "SELECT * FROM memory_session_links") == before_links
    assert _all(conn, "SELECT * FROM embeddings") == before_vectors
    conn.execute("INSERT INTO files_fts(files_fts) VALUES ('integrity-check')")
    # the pages the old tables held went back to the disk, not to the free list
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] < COMPACT_MIN_FREE_PAGES
    assert index.stat().st_size < before_bytes
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096  # an existing file keeps its own

    # The migrated index answers as one rebuilt from the tree does, and keeps updating.
    migrated = [plane.search(q).hits for q in FTS_QUERIES]
    assert plane.update().unchanged
    fresh = open_plane(clone_anchor(tmp_path / "fresh"), now=lambda: NOW)
    fresh.rebuild()
    assert migrated == [fresh.search(q).hits for q in FTS_QUERIES]
    spans = "SELECT chunk_id, own_text IS NULL FROM chunk_spans ORDER BY chunk_id"
    assert _all(conn, spans) == _all(fresh.db.conn, spans)  # a slice wherever a rebuild finds one
    plane.close()
    again = open_plane(store, now=lambda: NOW)  # the usage row outlives a reopen
    assert again.db.get("SELECT path FROM state.access")[0] == "areas/x.html"  # type: ignore[index]


def test_a_rebuild_leaves_an_empty_write_ahead_log(tmp_path: Path) -> None:
    """The rebuild's transaction passes every page through the log; the plane's connection stays
    open (as the daemon's does), so only a checkpoint gives those bytes back."""
    store = clone_anchor(tmp_path / "store")
    plane = open_plane(store, now=lambda: NOW)
    plane.rebuild()
    index = index_path_of(store)
    assert index.stat().st_size > 500_000
    assert _wal(index) == 0
    plane.rebuild()  # over an existing index: its pages are reused, the log emptied again
    assert _wal(index) == 0
    assert plane.db.get("PRAGMA page_size")[0] == PAGE_SIZE_BYTES  # type: ignore[index]
    disk = plane.status().disk_bytes
    assert disk.index_wal == 0 and disk.index_db == index.stat().st_size
    assert plane.db.get("PRAGMA freelist_count")[0] < COMPACT_MIN_FREE_PAGES  # type: ignore[index]


def test_the_log_shrinks_back_after_a_large_transaction(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    big = "x" * 4000
    db.write_all(
        [
            Write("INSERT INTO trace_watermarks VALUES (?, 0, ?, 0, 't')", (f"f{i}", big))
            for i in range(3000)
        ]
    )
    assert _wal(tmp_path / "index.db") > 2 * WAL_SIZE_LIMIT_BYTES  # one transaction, all logged
    db.run("INSERT INTO sleep_runs VALUES ('r', 'b', 's', NULL, 'running', 't', NULL)")
    assert _wal(tmp_path / "index.db") <= WAL_SIZE_LIMIT_BYTES
    db.close()
