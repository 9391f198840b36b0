"""Connections to ``index.db`` (with ``state.db`` attached), and the migration runners.

One writer connection and any number of read-only readers per store, all in WAL mode with
``synchronous = NORMAL``, foreign keys on and a five-second busy timeout. A statement or a
transaction that still meets ``SQLITE_BUSY`` after that wait is retried whole with jittered
exponential backoff, for up to 20 seconds, because a rolled-back transaction can be replayed
as is. Any other failure reaches the caller as :class:`StorageFailure` naming only the
operation: SQL parameters are memory text and never go into an error (docs/protocol.md, "Errors").

The migration runner applies each pending ``migrations/NNNN_*.sql`` file in filename order,
each file and its ledger row in one transaction, so a migration is applied whole or not at all.
``state.db`` is attached under the schema name ``state`` with its own ledger
(``state.schema_migrations``) fed from ``state_migrations/``, so deleting ``index.db`` never
marks a state migration unapplied.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from headd.errors import StorageFailure

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
MIGRATIONS_DIR = PACKAGE_DIR / "migrations"
STATE_MIGRATIONS_DIR = PACKAGE_DIR / "state_migrations"
STATE_SCHEMA = "state"

BUSY_TIMEOUT_S = 5.0
#: Whenever a checkpoint lets the write-ahead log start over, SQLite cuts the file back to this
#: size (``journal_size_limit``): without it the log keeps the size of the largest transaction
#: it ever held, which for a rebuild is the size of the database. The automatic checkpoint runs
#: at 1,000 pages (4 MiB), so this is the log's steady size.
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024
#: The page size of a new index.db. ``files`` rows (about 2 KB at SciFact's sizes) pack into
#: 4 KiB pages with a quarter of each left empty; 8 KiB pages hold them tighter. An existing
#: file keeps its size (a WAL database cannot change it).
PAGE_SIZE_BYTES = 8192
#: A database whose free pages are at least this share of it (and at least
#: :data:`COMPACT_MIN_FREE_PAGES`) is rewritten by :meth:`PlaneDb.compact`.
COMPACT_FREE_SHARE = 0.25
COMPACT_MIN_FREE_PAGES = 64
#: First backoff step and the total time a busy call keeps retrying (memhtml's: capped at 20 s).
BUSY_BACKOFF_FIRST_S = 0.015
BUSY_RETRY_BUDGET_S = 20.0

SqlValue = str | int | float | bytes | None
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Write:
    """One parameterised statement of a batch that commits whole or not at all."""

    sql: str
    params: tuple[SqlValue, ...] = ()


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(error) or "busy" in str(error)


_BLOB = bytes | bytearray | memoryview
#: The last blob seen in each argument position, decoded with its norm: within one statement
#: one side is the query vector every row compares against, so it is decoded once.
_decoded: dict[int, tuple[bytes, np.ndarray, float]] = {}


def _decode(position: int, blob: _BLOB) -> tuple[np.ndarray, float]:
    raw = bytes(blob)
    cached = _decoded.get(position)
    if cached is not None and cached[0] == raw:
        return cached[1], cached[2]
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float64)
    norm = float(np.sqrt(np.dot(vector, vector)))
    _decoded[position] = (raw, vector, norm)
    return vector, norm


def vector_distance_cos(a: object, b: object) -> float | None:
    """``1 - cosine`` of two float32 blobs; NULL for anything else (the SQL function)."""
    if not isinstance(a, _BLOB) or not isinstance(b, _BLOB):
        return None
    if len(a) == 0 or len(b) == 0 or len(a) % 4 or len(b) % 4:
        return None
    left, left_norm = _decode(0, a)
    right, right_norm = _decode(1, b)
    n = min(left.size, right.size)
    if n != left.size or n != right.size:
        left, right = left[:n], right[:n]
        left_norm = float(np.sqrt(np.dot(left, left)))
        right_norm = float(np.sqrt(np.dot(right, right)))
    norms = left_norm * right_norm
    if norms == 0.0:
        return 1.0
    similarity = float(np.dot(left, right)) / norms
    if similarity != similarity:  # NaN: no usable direction
        return 1.0
    return 1.0 - max(-1.0, min(1.0, similarity))


def _now_iso() -> str:
    # The migration ledger's applied_at is bookkeeping, never compared; the one clock read here.
    at = datetime.now(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


@dataclass
class PlaneDb:
    """One open connection to ``index.db`` and the calls every plane module goes through."""

    conn: sqlite3.Connection
    path: str
    readonly: bool
    has_state: bool = False
    migrations_applied: int = 0
    state_migrations_applied: int = 0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    # -- retries ----------------------------------------------------------------------------

    def _retrying(self, operation: str, thunk: Callable[[], T]) -> T:
        delay = BUSY_BACKOFF_FIRST_S
        waited = 0.0
        while True:
            try:
                return thunk()
            except sqlite3.Error as error:
                if _is_busy(error) and waited < BUSY_RETRY_BUDGET_S:
                    pause = min(delay * random.uniform(0.5, 1.5), BUSY_RETRY_BUDGET_S - waited)
                    log.warning("db.%s busy, retrying in %.3fs", operation, pause)
                    self.sleep(pause)
                    waited += pause
                    delay *= 2
                    continue
                log.error("db.%s failed: %s: %s", operation, type(error).__name__, error)
                raise StorageFailure(
                    f"storage failure during {operation}", {"operation": operation}
                ) from None

    # -- single statements ----------------------------------------------------------------------

    def all(self, sql: str, params: Sequence[SqlValue] = (), op: str = "all") -> list[sqlite3.Row]:
        return self._retrying(op, lambda: self.conn.execute(sql, tuple(params)).fetchall())

    def get(self, sql: str, params: Sequence[SqlValue] = (), op: str = "get") -> sqlite3.Row | None:
        return self._retrying(op, lambda: self.conn.execute(sql, tuple(params)).fetchone())

    def run(self, sql: str, params: Sequence[SqlValue] = (), op: str = "run") -> None:
        self._retrying(op, lambda: self.conn.execute(sql, tuple(params)))

    # -- transactions ---------------------------------------------------------------------------

    def transact(self, operation: str, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body`` in one ``BEGIN IMMEDIATE`` transaction; replay it whole when busy.

        ``body`` may raise a :class:`headd.errors.HeaddError` of its own: the transaction rolls
        back and that error passes through unchanged.
        """

        def attempt() -> T:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(self.conn)
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            return result

        return self._retrying(operation, attempt)

    def write_all(self, writes: Sequence[Write], op: str = "writeAll") -> None:
        """Apply every write atomically: all commit, or none do."""
        if not writes:
            return

        def body(conn: sqlite3.Connection) -> None:
            for write in writes:
                conn.execute(write.sql, write.params)

        self.transact(op, body)

    def script(self, sql: str, op: str = "script") -> None:
        """A whole parameterless script in one transaction (the migration primitive)."""
        self._apply_script(sql, op, ledger=None, name=None)

    def _apply_script(self, sql: str, op: str, ledger: str | None, name: str | None) -> None:
        tail = ""
        if ledger is not None and name is not None:
            quoted = name.replace("'", "''")
            tail = f";\nINSERT INTO {ledger} (name, applied_at) VALUES ('{quoted}', '{_now_iso()}')"

        def attempt() -> None:
            try:
                self.conn.executescript(f"BEGIN IMMEDIATE;\n{sql}{tail};\nCOMMIT;")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

        self._retrying(op, attempt)

    # -- the files on disk ------------------------------------------------------------------------

    def checkpoint(self, schema: str = "main") -> bool:
        """Copy the write-ahead log into the database and truncate it to zero bytes.

        ``TRUNCATE`` waits (the busy timeout) for readers still on an older snapshot; when one
        outlasts it the log stays as it is and the next checkpoint tries again. True when the
        log was emptied.
        """
        row = self.get(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)", op="checkpoint")
        done = row is not None and int(row[0]) == 0
        if not done:
            log.info("%s checkpoint left the write-ahead log in place: a reader holds it", schema)
        return done

    def compact(self) -> bool:
        """``VACUUM`` index.db when a large share of its pages is free, then checkpoint.

        A migration that recreates tables, or a rebuild that writes fewer rows than it deleted,
        leaves free pages that SQLite reuses but never returns to the disk. VACUUM keeps the
        rowid of every table that has an index (SQLite copies such tables row by row, rowid
        included); ``files`` and ``traces`` have their primary keys, so the full-text tables
        that point at them by rowid stay valid. True when the file was rewritten.
        """
        free = int(self.get("PRAGMA main.freelist_count", op="compact.probe")[0])  # type: ignore[index]
        pages = int(self.get("PRAGMA main.page_count", op="compact.probe")[0])  # type: ignore[index]
        if free < COMPACT_MIN_FREE_PAGES or free < pages * COMPACT_FREE_SHARE:
            return False
        page_size = int(self.get("PRAGMA main.page_size", op="compact.probe")[0])  # type: ignore[index]
        started = time.perf_counter()
        self.run("VACUUM main", op="compact")
        self.checkpoint()
        log.info(
            "index.db compacted: %.1f MB of free pages returned in %.0f ms",
            free * page_size / 1e6,
            (time.perf_counter() - started) * 1000,
        )
        return True

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several reads (a deferred transaction)."""
        self.run("BEGIN", op="read.begin")
        try:
            yield self.conn
        finally:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


# -- opening ----------------------------------------------------------------------------------


def _connect(target: str, uri: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(
        target,
        timeout=BUSY_TIMEOUT_S,
        isolation_level=None,
        check_same_thread=False,
        uri=uri,
    )
    conn.row_factory = sqlite3.Row
    conn.create_function("vector_distance_cos", 2, vector_distance_cos, deterministic=True)
    return conn


def _fail(operation: str, error: BaseException) -> StorageFailure:
    log.error("db.%s failed: %s: %s", operation, type(error).__name__, error)
    return StorageFailure(f"storage failure during {operation}", {"operation": operation})


def run_migrations(db: PlaneDb, migrations_dir: Path, schema: str = "main") -> int:
    """Apply every pending ``*.sql`` of ``migrations_dir`` in filename order; return the total.

    Each file and its ledger row commit in one transaction. ``schema`` names the ledger's
    database (``main`` for index.db, ``state`` for the attached state plane).
    """
    ledger = f"{schema}.schema_migrations"
    db.run(
        f"CREATE TABLE IF NOT EXISTS {ledger} (\n  name TEXT PRIMARY KEY,\n"
        "  applied_at TEXT NOT NULL\n)",
        op="migrate.init",
    )
    seen = {row["name"] for row in db.all(f"SELECT name FROM {ledger}", op="migrate.applied")}
    try:
        files = sorted(p for p in migrations_dir.iterdir() if p.suffix == ".sql")
    except OSError as error:
        if not migrations_dir.exists():
            return len(seen)
        raise _fail("migrate.scan", error) from None
    count = len(seen)
    for file in files:
        if file.name in seen:
            continue
        try:
            sql = file.read_text(encoding="utf-8")
        except OSError as error:
            raise _fail("migrate.read", error) from None
        db._apply_script(sql, "migrate.apply", ledger=ledger, name=file.name)
        log.info("applied migration %s%s", "" if schema == "main" else f"{schema}.", file.name)
        count += 1
    return count


def _applied(db: PlaneDb) -> int:
    """Migrations ``index.db`` had applied before this open (0 for a new file)."""
    found = db.get(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
        op="migrate.probe",
    )
    if found is None:
        return 0
    row = db.get("SELECT count(*) FROM main.schema_migrations", op="migrate.probe")
    return int(row[0]) if row else 0


def _state_ready(db: PlaneDb) -> bool:
    row = db.get(
        f"SELECT 1 FROM {STATE_SCHEMA}.sqlite_master WHERE type = 'table' AND name = 'access'",
        op="state.probe",
    )
    return row is not None


def open_writer(
    index_path: Path | str,
    state_path: Path | str | None = None,
    migrations_dir: Path = MIGRATIONS_DIR,
    state_migrations_dir: Path = STATE_MIGRATIONS_DIR,
) -> PlaneDb:
    """The store's one writer: pragmas set, every pending migration applied, state attached."""
    target = str(index_path)
    if target != ":memory:":
        try:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _fail("mkdir", error) from None
    try:
        conn = _connect(target, uri=False)
    except sqlite3.Error as error:
        raise _fail("connect", error) from None
    db = PlaneDb(conn=conn, path=target, readonly=False)
    try:
        db.run(f"PRAGMA page_size = {PAGE_SIZE_BYTES}", op="pragmas")  # a new file only
        db.all("PRAGMA journal_mode = WAL", op="pragmas")
        db.all(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}", op="pragmas")
        db.run("PRAGMA synchronous = NORMAL", op="pragmas")
        db.run("PRAGMA foreign_keys = ON", op="pragmas")
        before = _applied(db)
        db.migrations_applied = run_migrations(db, migrations_dir)
        if before and db.migrations_applied > before:
            # an existing index was migrated: a recreated table leaves its old pages free
            db.compact()
        if state_path is not None:
            attach_state(db, state_path, state_migrations_dir)
    except BaseException:
        conn.close()
        raise
    return db


def attach_state(db: PlaneDb, state_path: Path | str, migrations_dir: Path) -> None:
    """ATTACH ``state.db`` as ``state`` and bring its own ledger up to date."""
    target = str(state_path)
    if target != ":memory:":
        try:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _fail("state.mkdir", error) from None
    db.run(f"ATTACH DATABASE ? AS {STATE_SCHEMA}", (target,), op="state.attach")
    db.all(f"PRAGMA {STATE_SCHEMA}.journal_mode = WAL", op="state.pragmas")
    db.all(f"PRAGMA {STATE_SCHEMA}.journal_size_limit = {WAL_SIZE_LIMIT_BYTES}", op="state.pragmas")
    db.state_migrations_applied = run_migrations(db, migrations_dir, schema=STATE_SCHEMA)
    db.has_state = _state_ready(db)


def open_reader(index_path: Path | str, state_path: Path | str | None = None) -> PlaneDb:
    """A read-only connection to an existing, migrated ``index.db`` (and ``state.db``)."""
    target = Path(index_path)
    if not target.exists():
        raise StorageFailure("storage failure during connect", {"operation": "connect"})
    try:
        conn = _connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise _fail("connect", error) from None
    db = PlaneDb(conn=conn, path=str(target), readonly=True)
    db.run("PRAGMA foreign_keys = ON", op="pragmas")
    if state_path is not None and Path(state_path).exists():
        uri = f"{Path(state_path).resolve().as_uri()}?mode=ro"
        db.run(f"ATTACH DATABASE ? AS {STATE_SCHEMA}", (uri,), op="state.attach")
        db.has_state = _state_ready(db)
    return db
