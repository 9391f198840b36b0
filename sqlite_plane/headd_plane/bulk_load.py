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

Any integrity failure (a duplicate body above all) rolls the bulk load back to its savepoint,
triggers included, and :func:`load` returns False: the caller then replays the per-file writes,
which name the file that failed exactly as before. A kill at any point leaves the transaction
uncommitted, so the old index and its triggers stay as they were.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from .projection import UPSERT_FILE_SQL, FileProjection

#: The triggers that keep ``files_fts`` equal to ``files``; a rebuild refills the index whole.
FTS_TRIGGERS = ("files_fts_insert", "files_fts_delete", "files_fts_update")
#: Page cache for the bulk load (KiB, as a negative ``cache_size``): the ``files`` table carries
#: ten indexes, and the 2 MiB default spills and rereads their pages many times over.
BULK_CACHE_KIB = 65536


def rows_by_statement(projections: Sequence[FileProjection]) -> list[tuple[str, list[tuple]]]:
    """Each statement's parameter rows in file order, ``files`` first; deletes left out."""
    grouped: dict[str, list[tuple]] = {UPSERT_FILE_SQL: []}
    for projection in projections:
        for write in projection.writes:
            if write.sql.startswith("DELETE "):
                continue
            grouped.setdefault(write.sql, []).append(write.params)
    return list(grouped.items())


def load(
    conn: sqlite3.Connection,
    tables: Sequence[str],
    projections: Sequence[FileProjection],
    batch_size: int,
    hook: Callable[[str], None],
) -> bool:
    """Empty ``tables`` and insert every projection's rows; False (and nothing changed) when a
    row broke a constraint. Runs inside the caller's transaction."""
    statements = rows_by_statement(projections)
    previous_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    conn.execute("SAVEPOINT headd_bulk_load")
    try:
        triggers = _set_triggers_aside(conn)
        for table in tables:
            conn.execute(f"DELETE FROM {table}")
        hook("rebuild.truncated")
        for sql, rows in statements:
            for start in range(0, len(rows), batch_size):
                conn.executemany(sql, rows[start : start + batch_size])
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
