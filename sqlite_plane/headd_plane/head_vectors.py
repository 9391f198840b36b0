"""The head's vector cache as rows of ``index.db``: ``head_vectors(space, content_hash, vector)``.

Why a table rather than one file: a fill appends the vectors it made (one small transaction per
batch) instead of rewriting every vector held, and a crash loses at most the batch in flight.
Rows are keyed by content hash inside one vector space (``model@dim``), so a restart, a move or
a head-only edit costs no embedding, and vectors of two spaces are never mixed: every read and
every write names its space, and a vector whose width is not the space's is refused with
:class:`EmbedModelMismatch` before anything is written.

The table is headd's own (migration ``head_migrations/0101_head_vectors.sql``, kept apart from
``migrations/`` so index.db's memhtml schema stays exactly memhtml's); it is created on the
writer connection the first time vectors are written. Reading needs no writer: a missing table
is an empty cache.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from headd.errors import EmbedModelMismatch, StorageFailure
from headd.head.vectors import CACHE_DTYPE, VectorCache, VectorSpace, unit_rows
from headd_plane.db import PACKAGE_DIR, PlaneDb, run_migrations

log = logging.getLogger(__name__)

HEAD_MIGRATIONS_DIR = PACKAGE_DIR / "head_migrations"
_INSERT = "INSERT OR REPLACE INTO head_vectors (space, content_hash, vector) VALUES (?, ?, ?)"


def ensure_table(db: PlaneDb) -> None:
    """Apply headd's own index.db migrations (idempotent; the writer connection only)."""
    run_migrations(db, HEAD_MIGRATIONS_DIR)


def rows_of(
    space: VectorSpace, hashes: Sequence[str], vectors: npt.ArrayLike
) -> list[tuple[str, str, bytes]]:
    """The rows to insert; refused whole when the vectors are not ``space``'s width."""
    matrix = np.asarray(vectors, dtype="<f4")
    if matrix.ndim != 2 or matrix.shape[0] != len(hashes) or matrix.shape[1] != space.dim:
        raise EmbedModelMismatch(
            f"cannot store vectors of shape {matrix.shape} in {space.id}",
            {"space": space.id, "shape": list(matrix.shape)},
        )
    return [(space.id, h, matrix[i].tobytes()) for i, h in enumerate(hashes)]


def append_vectors(
    db: PlaneDb, space: VectorSpace, hashes: Sequence[str], vectors: npt.ArrayLike
) -> int:
    """Insert (or replace) one batch in one transaction; returns the rows written."""
    rows = rows_of(space, hashes, vectors)
    if not rows:
        return 0
    ensure_table(db)
    db.transact("head_vectors.append", lambda conn: conn.executemany(_INSERT, rows))
    return len(rows)


#: Rows read and converted at a time: a load holds one chunk of float32 beside the cache.
_LOAD_CHUNK = 4_096


def _load_rows(conn: sqlite3.Connection, space: VectorSpace) -> VectorCache:
    """The cache of ``space``'s rows, converted a chunk at a time into its unit float16 rows, so
    the load never holds every vector twice (one read transaction: the count and the rows agree)."""
    try:
        conn.execute("BEGIN")
        (count,) = conn.execute(
            "SELECT count(*) FROM head_vectors WHERE space = ?", (space.id,)
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return VectorCache.empty(space)
        raise
    width = 4 * space.dim
    rows: dict[str, int] = {}
    unit = np.empty((int(count), space.dim), dtype=CACHE_DTYPE)
    cursor = conn.execute(
        "SELECT content_hash, vector FROM head_vectors WHERE space = ?", (space.id,)
    )
    while found := cursor.fetchmany(_LOAD_CHUNK):
        blobs: list[bytes] = []
        for content_hash, blob in found:
            if len(blob) != width:
                raise EmbedModelMismatch(
                    f"a stored vector of {len(blob)} bytes is not of {space.id}",
                    {"space": space.id, "bytes": len(blob)},
                )
            rows[str(content_hash)] = len(rows)
            blobs.append(blob)
        start = len(rows) - len(blobs)
        chunk = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), space.dim)
        unit[start : len(rows)] = unit_rows(chunk)
    conn.rollback()
    return VectorCache(space, rows, unit=unit)


def load_cache(index_path: Path, space: VectorSpace) -> VectorCache:
    """Every vector of ``space`` stored in ``index_path`` (empty when there is no file/table)."""
    if not index_path.exists():
        return VectorCache.empty(space)
    try:
        conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        raise StorageFailure("cannot open index.db for the vector cache", {}) from exc
    try:
        return _load_rows(conn, space)
    except sqlite3.Error as exc:
        log.error("reading head_vectors failed: %s", exc)
        raise StorageFailure("cannot read the vector cache from index.db", {}) from exc
    finally:
        conn.close()


def stored_spaces(db: PlaneDb) -> dict[str, int]:
    """Rows per space (what ``status`` and tests ask)."""
    ensure_table(db)
    rows = db.all("SELECT space, count(*) AS n FROM head_vectors GROUP BY space")
    return {str(row["space"]): int(row["n"]) for row in rows}
