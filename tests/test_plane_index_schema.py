"""index.db's schema and the migration runner, on real SQLite files."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from headd_plane.db import MIGRATIONS_DIR, STATE_MIGRATIONS_DIR, open_reader, open_writer
from support.data import anchor_index

from headd.errors import StorageFailure


def _normalized(sql: str | None) -> str | None:
    if sql is None:
        return None
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = re.sub(r"\s+", " ", sql)
    sql = re.sub(r"\s*([(),])\s*", r"\1", sql)
    return sql.strip().replace('"files"', "files").replace('"edges"', "edges")


def _schema(conn: sqlite3.Connection) -> dict[tuple[str, str], str | None]:
    return {
        (kind, name): _normalized(sql)
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")
    }


#: What headd's own migration 0100 (the body stored once) changes of memhtml's schema.
LEAN_MIGRATION = "0100_lean_text.sql"
LEAN_CHANGED = {
    ("table", "files"),  # fts_text generated, not stored
    ("table", "embeddings"),  # references chunk_spans
    ("trigger", "files_fts_update"),  # fires on the columns fts_text is made of
}
LEAN_REPLACED = {
    ("table", "chunks"),  # a view of the same name and columns
    ("index", "chunks_hash"),  # chunk_spans_hash_ord leads with the same column
    ("index", "chunks_path"),
    ("index", "chunks_hash_ord"),
    ("index", "sqlite_autoindex_chunks_1"),
}
LEAN_ADDED = {
    ("table", "chunk_spans"),
    ("index", "chunk_spans_path"),
    ("index", "chunk_spans_hash_ord"),
    ("index", "sqlite_autoindex_chunk_spans_1"),
    ("view", "chunks"),
}


def test_migrations_build_memhtml_0_15_1_schema_but_for_the_lean_text(tmp_path: Path) -> None:
    """Every object memhtml 0.15.1's index holds is ours unchanged, except the few migration 0100
    changes; and ``files`` and ``chunks`` still read as memhtml's columns, in its order."""
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    reference = anchor_index()
    ours, theirs = _schema(db.conn), _schema(reference)
    assert set(ours) == (set(theirs) - LEAN_REPLACED) | LEAN_ADDED
    differing = {k for k in theirs if k in ours and theirs[k] != ours[k]}
    assert differing == LEAN_CHANGED
    for table in ("files", "chunks"):
        select = f"SELECT * FROM {table} LIMIT 0"
        assert [d[0] for d in db.conn.execute(select).description] == [
            d[0] for d in reference.execute(select).description
        ], table
    names = [r[0] for r in db.conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    tools = [r[0] for r in reference.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [*tools, LEAN_MIGRATION]


def test_connection_pragmas_and_the_cosine_function(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "index.db")
    assert db.get("PRAGMA journal_mode")[0] == "wal"  # type: ignore[index]
    assert db.get("PRAGMA foreign_keys")[0] == 1  # type: ignore[index]
    assert db.get("PRAGMA synchronous")[0] == 1  # type: ignore[index]  # NORMAL
    import numpy as np

    a = np.array([1, 0], dtype="<f4").tobytes()
    b = np.array([0, 1], dtype="<f4").tobytes()
    row = db.get("SELECT vector_distance_cos(?, ?), vector_distance_cos(?, ?)", (a, a, a, b))
    assert row is not None and row[0] == pytest.approx(0.0) and row[1] == pytest.approx(1.0)


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    first = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    applied = first.migrations_applied
    first.close()
    again = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    assert again.migrations_applied == applied
    rows = again.all("SELECT count(*) AS n, count(DISTINCT name) AS d FROM schema_migrations")
    assert rows[0]["n"] == rows[0]["d"] == applied


def test_a_failing_migration_applies_nothing_of_itself(tmp_path: Path) -> None:
    migrations = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, migrations)
    (migrations / "0099_broken.sql").write_text(
        "CREATE TABLE half_done (x INTEGER);\nINSERT INTO no_such_table VALUES (1);\n"
    )
    with pytest.raises(StorageFailure) as caught:
        open_writer(tmp_path / "index.db", migrations_dir=migrations)
    assert caught.value.details == {"operation": "migrate.apply"}
    conn = sqlite3.connect(tmp_path / "index.db")
    assert conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'"
    ).fetchone() == (0,)
    ledger = {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
    assert "0099_broken.sql" not in ledger and "0012_origin_path.sql" in ledger


def test_state_plane_keeps_its_own_ledger_when_index_db_is_deleted(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    assert db.has_state and db.state_migrations_applied == len(
        list(STATE_MIGRATIONS_DIR.glob("*.sql"))
    )
    db.run("INSERT INTO state.access (path, updated_at) VALUES ('areas/x.html', 't')")
    db.close()
    (tmp_path / "index.db").unlink()
    for extra in ("index.db-wal", "index.db-shm"):
        (tmp_path / extra).unlink(missing_ok=True)
    again = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    assert again.state_migrations_applied == db.state_migrations_applied
    assert again.get("SELECT path FROM state.access")[0] == "areas/x.html"  # type: ignore[index]


def test_reader_is_read_only_and_failures_name_only_the_operation(tmp_path: Path) -> None:
    open_writer(tmp_path / "index.db").close()
    reader = open_reader(tmp_path / "index.db")
    with pytest.raises(StorageFailure) as caught:
        reader.run(
            "INSERT INTO sleep_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("secret memory text", "b", "s", None, "running", "t", None),
            op="probe.write",
        )
    assert "secret" not in caught.value.message
    assert caught.value.details == {"operation": "probe.write"}


def test_busy_writer_is_retried_with_backoff(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "index.db")
    db.conn.execute("PRAGMA busy_timeout = 0")
    blocker = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    pauses: list[float] = []

    def release_after_two(pause: float) -> None:
        pauses.append(pause)
        if len(pauses) == 2:
            blocker.execute("COMMIT")

    db.sleep = release_after_two
    db.run("INSERT INTO sleep_runs VALUES ('r', 'b', 's', NULL, 'running', 't', NULL)")
    assert len(pauses) == 2 and pauses[1] > pauses[0] * 0.5
    assert db.get("SELECT run_id FROM sleep_runs")[0] == "r"  # type: ignore[index]
