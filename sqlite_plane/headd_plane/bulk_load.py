"""A rebuild's bulk load: every file's rows into the emptied memory tables, table by table.

``update`` applies each file's writes in turn (its deletes, then its upserts), which a rebuild
could replay too, and did: 86,000 statements for 10,000 files, a third of them deletes that
can find nothing in tables just emptied, and each ``files`` insert firing the FTS5 trigger as
its own statement, so FTS5 flushed a segment per row (3.9 s of CPU for the ``files`` inserts
against 0.8 s without the trigger, at 10,000 files). Here, inside the rebuild's one transaction:

* the three ``files_fts_*`` triggers are set aside (their exact SQL is read from
  ``sqlite_master`` and put back before the transaction ends, so the schema after a rebuild is
  the schema before it), the memory tables are emptied, every file's rows go in with one
  ``executemany`` per statement, ``files`` first for the foreign keys, with each file's deletes
  left out, and FTS5 is rebuilt once from ``files`` (its ``'rebuild'`` command);
* rows keep the per-file order within each table, so an upsert that two files share (two files,
  one archived, with one body: one chunk id) ends on the same file as before.

The rows arrive as :class:`BulkRows`, filled file by file while the rest of the tree is still
being parsed (``projection.file_rows``: plain tuples, no statement objects, no deletes). The two
big tables' rows (``files``, ``chunks``) are staged meanwhile, every :data:`STAGE_EVERY` files,
in untyped tables of the connection's private ``temp`` schema: that binds the parameters while
the parse runs (and while a pool parses, this process would only wait), takes no lock on
``index.db`` or ``state.db``, and leaves the transaction one ``INSERT … SELECT`` per table in
staging order, same upsert, same rows: 0.3 s + 0.2 s of CPU where the ``executemany`` took
0.75 s + 0.4 s at 10,000 files. The staging tables are dropped whatever happens.

Any integrity failure (a duplicate body above all) rolls the bulk load back to its savepoint,
triggers included, and :func:`load` returns False: the caller then replays the per-file writes,
which name the file that failed exactly as before. A kill at any point leaves the transaction
uncommitted, so the old index and its triggers stay as they were.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from .projection import FILE_COLUMNS, ROW_STATEMENTS, UPSERT_CHUNK_SQL, UPSERT_FILE_SQL, Row

#: The triggers that keep ``files_fts`` equal to ``files``; a rebuild refills the index whole.
FTS_TRIGGERS = ("files_fts_insert", "files_fts_delete", "files_fts_update")
#: Page cache for the bulk load (KiB, as a negative ``cache_size``): the ``files`` table carries
#: ten indexes, and the 2 MiB default spills and rereads their pages many times over.
BULK_CACHE_KIB = 65536
_CHUNK_ROWS = ROW_STATEMENTS.index(UPSERT_CHUNK_SQL)
#: Files between two stagings of the big tables' rows.
STAGE_EVERY = 1000
CHUNK_COLUMNS = ("chunk_id", "path", "content_hash", "ordinal", "text", "char_count")
#: Statement -> (its table, its columns in bind order): the rows staged in ``temp``.
STAGED: dict[str, tuple[str, tuple[str, ...]]] = {
    UPSERT_FILE_SQL: ("files", FILE_COLUMNS),
    UPSERT_CHUNK_SQL: ("chunks", CHUNK_COLUMNS),
}


def _stage_table(table: str) -> str:
    return f"temp.headd_stage_{table}"


def _from_stage(sql: str) -> str:
    """``sql`` (an ``INSERT … VALUES … [ON CONFLICT …]``) fed from its staging table instead."""
    table, columns = STAGED[sql]
    head, _, rest = sql.partition(" VALUES (")
    _, _, upsert = rest.partition(")")
    names = ", ".join(columns)
    # WHERE true: SQLite's rule for an upsert after INSERT … SELECT
    return f"{head} SELECT {names} FROM {_stage_table(table)} WHERE true ORDER BY rowid{upsert}"


class BulkRows:
    """Every file's insert rows, one list per statement of ``projection.ROW_STATEMENTS``; with a
    connection, the ``files`` and ``chunks`` rows go to its ``temp`` staging tables as they come.
    """

    __slots__ = ("by_statement", "files", "chunks", "conn", "_pending", "_staged")

    def __init__(self, conn: sqlite3.Connection | None = None) -> None:
        self.by_statement: tuple[list[Row], ...] = tuple([] for _ in ROW_STATEMENTS)
        self.files = 0
        self.chunks = 0
        self.conn = conn
        self._pending = 0
        self._staged = False

    def add(self, rows: tuple[list[Row], ...]) -> None:
        """One file's rows (``projection.file_rows``), after those of the files before it."""
        for into, more in zip(self.by_statement, rows, strict=True):
            into += more
        self.files += 1
        self.chunks += len(rows[_CHUNK_ROWS])
        self._pending += 1
        if self._pending >= STAGE_EVERY:
            self.stage()

    def stage(self) -> None:
        """Move the big tables' rows gathered so far into the staging tables, in a transaction
        that touches ``temp`` only; called between files, never inside the rebuild's transaction
        (which :func:`load` may replay whole, so it must find every row where it was)."""
        conn = self.conn
        self._pending = 0
        if conn is None:
            return
        if not self._staged:
            for table, columns in STAGED.values():
                conn.execute(f"DROP TABLE IF EXISTS {_stage_table(table)}")
                conn.execute(f"CREATE TABLE {_stage_table(table)} ({', '.join(columns)})")
            self._staged = True
        conn.execute("BEGIN")
        try:
            for sql, (table, columns) in STAGED.items():
                rows = self.by_statement[ROW_STATEMENTS.index(sql)]
                holes = ", ".join("?" for _ in columns)
                conn.executemany(f"INSERT INTO {_stage_table(table)} VALUES ({holes})", rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for sql in STAGED:  # only once committed: a failed staging keeps its rows here
            self.by_statement[ROW_STATEMENTS.index(sql)].clear()

    @property
    def staged(self) -> bool:
        return self._staged

    def close(self) -> None:
        """Drop the staging tables (a no-op when nothing was staged)."""
        if self.conn is not None and self._staged:
            for table, _ in STAGED.values():
                self.conn.execute(f"DROP TABLE IF EXISTS {_stage_table(table)}")
            self._staged = False


def load(
    conn: sqlite3.Connection,
    tables: Sequence[str],
    rows: BulkRows,
    batch_size: int,
    hook: Callable[[str], None],
) -> bool:
    """Empty ``tables`` and insert every projection's rows; False (and nothing changed) when a
    row broke a constraint. Runs inside the caller's transaction."""
    previous_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    conn.execute("SAVEPOINT headd_bulk_load")
    try:
        triggers = _set_triggers_aside(conn)
        for table in tables:
            conn.execute(f"DELETE FROM {table}")
        hook("rebuild.truncated")
        for sql, params in zip(ROW_STATEMENTS, rows.by_statement, strict=True):
            if sql in STAGED and rows.staged:
                conn.execute(_from_stage(sql))  # then any rows gathered since, in order
                hook("rebuild.batch")
            for start in range(0, len(params), batch_size):
                conn.executemany(sql, params[start : start + batch_size])
                hook("rebuild.batch")
        conn.execute("INSERT INTO files_fts(files_fts) VALUES ('rebuild')")
        for sql in triggers:
            conn.execute(sql)
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK TO headd_bulk_load")
        conn.execute("RELEASE headd_bulk_load")
        return False
    finally:
        conn.execute(f"PRAGMA cache_size = {int(previous_cache)}")
    conn.execute("RELEASE headd_bulk_load")
    return True


def _set_triggers_aside(conn: sqlite3.Connection) -> list[str]:
    """Drop the FTS triggers of ``files``; return the statements that recreate them."""
    holes = ", ".join("?" for _ in FTS_TRIGGERS)
    found = conn.execute(
        f"SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' AND name IN ({holes}) "
        "ORDER BY name",
        FTS_TRIGGERS,
    ).fetchall()
    for name, _ in found:
        conn.execute(f"DROP TRIGGER main.{name}")
    return [str(sql) for _, sql in found]
