"""A rebuild's bulk load: every file's rows into the emptied memory tables, table by table.

``update`` applies each file's writes in turn (its deletes, then its upserts), which a rebuild
could replay too: nine statements a file, a third of them deletes that can find nothing in
tables just emptied, and each ``files`` insert firing the FTS5 trigger as its own statement, so
FTS5 would flush a segment per row (several times the CPU of the inserts themselves). The
rebuild must be at least 3× faster than memhtml's at 10,000 files. Here, inside the rebuild's
one transaction:

* the three ``files_fts_*`` triggers are set aside (their exact SQL is read from
  ``sqlite_master`` and put back before the transaction ends, so the schema after a rebuild is
  the schema before it), the memory tables are emptied, every file's rows go in with one
  ``executemany`` per statement, ``files`` first for the foreign keys, with each file's deletes
  left out, and FTS5 is rebuilt once from ``files`` (its ``'rebuild'`` command);
* rows keep the per-file order within each table, so an upsert that two files share (two files,
  one archived, with one body: one chunk id) ends on the same file as before.

The rows arrive as :class:`BulkRows`, filled file by file while the rest of the tree is still
being parsed (``projection.file_rows``: plain tuples, no statement objects, no deletes). The two
big tables' rows (``files``, ``chunk_spans``) are staged meanwhile, every :data:`STAGE_EVERY`
files, in untyped tables of the connection's private ``temp`` schema: that binds the parameters
while the parse runs (and while a pool parses, this process would only wait), takes no lock on
``index.db`` or ``state.db``, and leaves the transaction one ``INSERT … SELECT`` per table in
staging order, same upsert, same rows, in less than half the CPU of the ``executemany``. The
staging tables are dropped whatever happens.

The full-text index is built meanwhile too: each staging also feeds each staged row's
``fts_text`` (a generated column of ``files``, computed here by the parser's own join) to a
contentless FTS5 table in ``temp`` (``files_fts``'s own definition, same tokenizer), its rowids
the staging order. When the transaction's ``files`` rows turn out to be exactly the staged ones
with rowids 1..N in that order (``files`` was just emptied, so they are unless a row was refused),
``files_fts`` is dropped and created again from its own SQL (a fresh FTS5 object: no structure
cached by this connection) and its three index tables are copied from the staged one (a tenth of
the CPU of FTS5's ``'rebuild'``; the tokenizing happens while the tree is parsed). Any other
case runs the ``'rebuild'`` command. FTS5 keeps the same index format whatever the content
option, and its own ``integrity-check`` holds after the copy.

Any integrity failure (a duplicate body above all) rolls the bulk load back to its savepoint,
triggers included, and :func:`load` returns False: the caller then replays the per-file writes,
which name the file that failed exactly as before. A kill at any point leaves the transaction
uncommitted, so the old index and its triggers stay as they were.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence

from headd.memfile.text import fts_text_of

from .projection import (
    CHUNK_COLUMNS,
    FILE_COLUMNS,
    ROW_STATEMENTS,
    UPSERT_CHUNK_SQL,
    UPSERT_FILE_SQL,
    Row,
)

#: The triggers that keep ``files_fts`` equal to ``files``; a rebuild refills the index whole.
FTS_TRIGGERS = ("files_fts_insert", "files_fts_delete", "files_fts_update")
#: Page cache for the bulk load (KiB, as a negative ``cache_size``): the ``files`` table carries
#: ten indexes, and the 2 MiB default spills and rereads their pages many times over.
BULK_CACHE_KIB = 65536
_CHUNK_ROWS = ROW_STATEMENTS.index(UPSERT_CHUNK_SQL)
#: Where the parts of ``files.fts_text`` (a generated column) sit in a ``files`` row.
_FTS_PARTS = tuple(FILE_COLUMNS.index(c) for c in ("title", "gist", "body_text"))
#: Files between two stagings of the big tables' rows.
STAGE_EVERY = 1000
#: Statement -> (its table, its columns in bind order): the rows staged in ``temp``.
STAGED: dict[str, tuple[str, tuple[str, ...]]] = {
    UPSERT_FILE_SQL: ("files", FILE_COLUMNS),
    UPSERT_CHUNK_SQL: ("chunk_spans", CHUNK_COLUMNS),
}


#: The FTS5 table a rebuild refills, and the one each staging feeds in ``temp``.
FTS_TABLE = "files_fts"
STAGE_FTS = "headd_stage_fts"
#: FTS5's index tables (name suffix, columns): all a contentless and an external-content table
#: hold in common; ``_config`` stays as the fresh table writes it.
FTS_INDEX_TABLES = (("data", "id, block"), ("idx", "segid, term, pgno"), ("docsize", "id, sz"))
_EXTERNAL_CONTENT = re.compile(r",\s*content\s*=\s*'files'\s*,\s*content_rowid\s*=\s*'rowid'\s*")


def _fts_text(row: Row) -> str:
    """The row's ``fts_text``, as its generated column computes it (the parser's join)."""
    title, gist, body = (row[i] for i in _FTS_PARTS)
    return fts_text_of(str(title), str(gist), str(body))


def _stage_table(table: str) -> str:
    return f"temp.headd_stage_{table}"


def _staged_fts_sql(conn: sqlite3.Connection) -> str | None:
    """``files_fts``'s definition made contentless in ``temp``; None when the definition is not
    the one this copy understands (then the rebuild uses FTS5's ``'rebuild'``)."""
    row = conn.execute(
        "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
    ).fetchone()
    if row is None:
        return None
    sql = str(row[0])
    head = f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
    if not sql.startswith(head) or len(_EXTERNAL_CONTENT.findall(sql)) != 1:
        return None
    body = _EXTERNAL_CONTENT.sub(", content=''", sql[len(head) :])
    return f"CREATE VIRTUAL TABLE temp.{STAGE_FTS} USING fts5({body}"


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

    __slots__ = ("by_statement", "files", "chunks", "conn", "_pending", "_staged", "fts_rows")

    def __init__(self, conn: sqlite3.Connection | None = None) -> None:
        self.by_statement: tuple[list[Row], ...] = tuple([] for _ in ROW_STATEMENTS)
        self.files = 0
        self.chunks = 0
        self.conn = conn
        self._pending = 0
        self._staged = False
        #: Staged ``files`` rows also in the temp FTS table (None: no such table this time).
        self.fts_rows: int | None = None

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
            # ``temp`` is this connection's scratch space, never durable: journaling its writes in
            # memory halves the CPU of dropping the staging tables
            conn.execute("PRAGMA temp.journal_mode = MEMORY").fetchall()
            for table, columns in STAGED.values():
                conn.execute(f"DROP TABLE IF EXISTS {_stage_table(table)}")
                conn.execute(f"CREATE TABLE {_stage_table(table)} ({', '.join(columns)})")
            conn.execute(f"DROP TABLE IF EXISTS temp.{STAGE_FTS}")
            fts_sql = _staged_fts_sql(conn)
            if fts_sql is not None:
                conn.execute(fts_sql)
                self.fts_rows = 0
            self._staged = True
        fts_rows = self.fts_rows
        conn.execute("BEGIN")
        try:
            for sql, (table, columns) in STAGED.items():
                rows = self.by_statement[ROW_STATEMENTS.index(sql)]
                holes = ", ".join("?" for _ in columns)
                conn.executemany(f"INSERT INTO {_stage_table(table)} VALUES ({holes})", rows)
                if fts_rows is not None and sql == UPSERT_FILE_SQL:
                    conn.executemany(
                        f"INSERT INTO temp.{STAGE_FTS} (rowid, fts_text) VALUES (?, ?)",
                        enumerate(map(_fts_text, rows), start=fts_rows + 1),
                    )
                    fts_rows += len(rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for sql in STAGED:  # only once committed: a failed staging keeps its rows here
            self.by_statement[ROW_STATEMENTS.index(sql)].clear()
        self.fts_rows = fts_rows

    @property
    def staged(self) -> bool:
        return self._staged

    def close(self) -> None:
        """Drop the staging tables (a no-op when nothing was staged)."""
        if self.conn is not None and self._staged:
            for table, _ in STAGED.values():
                self.conn.execute(f"DROP TABLE IF EXISTS {_stage_table(table)}")
            self.conn.execute(f"DROP TABLE IF EXISTS temp.{STAGE_FTS}")
            self._staged = False
            self.fts_rows = None


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
        if not _copy_staged_fts(conn, rows):
            conn.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
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


def _copy_staged_fts(conn: sqlite3.Connection, rows: BulkRows) -> bool:
    """Refill ``files_fts`` from the staged FTS table; False (nothing done) unless ``files``
    holds exactly the staged rows, rowids 1..N in staging order, which the staged index names."""
    staged = rows.fts_rows
    if not rows.staged or not staged:
        return False
    count, top = conn.execute(
        "SELECT count(*), coalesce(max(rowid), 0) FROM main.files"
    ).fetchall()[0]
    if count != staged or top != staged:
        return False
    sql = conn.execute(
        "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
    ).fetchone()[0]
    conn.execute(f"DROP TABLE main.{FTS_TABLE}")
    conn.execute(sql)
    for suffix, columns in FTS_INDEX_TABLES:
        target = f"main.{FTS_TABLE}_{suffix}"
        conn.execute(f"DELETE FROM {target}")
        conn.execute(
            f"INSERT INTO {target} ({columns}) SELECT {columns} FROM temp.{STAGE_FTS}_{suffix}"
        )
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
