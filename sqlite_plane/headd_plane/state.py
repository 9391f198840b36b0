"""The state plane: per-path access bookkeeping in ``state.db``.

These are the one set of facts git cannot reproduce (how often a memory was retrieved, whether
it helped), so they live in their own database, ATTACHed to ``index.db`` under the schema name
``state``, and are carried between machines by the committed sidecar (``headd_plane.sidecar``).

``reinforce`` is the only writer of ``state.access``. Its cooldown is decided by SQLite inside
the one upsert statement, and ``RETURNING`` says which rows the statement really changed, so
the ``bumped``/``cooled_down`` split is true even when two processes reinforce one store at
once (deciding in Python after a SELECT would race).

Every function takes an open ``sqlite3.Connection`` with ``state.db`` attached as ``state`` and
an injected ``now``; none reads the clock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from headd.errors import InvalidParams, StorageFailure

STATE_SCHEMA = "state"

#: Seconds a path must rest before its next access bump (memhtml's ``REINFORCE_COOLDOWN_S``).
REINFORCE_COOLDOWN_S = 900

#: The weight a new outcome signal carries in the EWMA; the rest keeps the prior score.
OUTCOME_EWMA_ALPHA = 0.3

#: Paths per upsert statement: one statement answers for a whole batch.
REINFORCE_PATH_BATCH = 500

Signal = Literal["neutral", "positive", "negative"]
SIGNAL_VALUES: dict[str, int] = {"positive": 1, "negative": -1, "neutral": 0}


class ReinforceResult(TypedDict):
    bumped: list[str]
    cooled_down: list[str]


def iso_ms(now: datetime) -> str:
    """``now`` as memhtml writes instants (JavaScript ``toISOString``: UTC, milliseconds, ``Z``)."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    utc = now.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction whatever the connection's isolation mode; nested ones savepoint.

    ``BEGIN IMMEDIATE`` takes the write lock up front, so a busy store fails (or waits, under
    the connection's busy timeout) before any work is done rather than at commit.
    """
    if conn.in_transaction:
        conn.execute("SAVEPOINT headd_plane")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO headd_plane")
            conn.execute("RELEASE headd_plane")
            raise
        conn.execute("RELEASE headd_plane")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def signal_value(signal: str) -> int:
    """The numeric value of a reinforce signal; an unknown name is a caller error."""
    try:
        return SIGNAL_VALUES[signal]
    except KeyError:
        raise InvalidParams(
            "signal must be one of neutral, positive, negative", {"signal": signal}
        ) from None


def has_state(conn: sqlite3.Connection) -> bool:
    """Whether ``state.db`` is attached and migrated (has ``state.access``)."""
    try:
        row = conn.execute(
            f"SELECT 1 FROM {STATE_SCHEMA}.sqlite_master WHERE type = 'table' AND name = 'access'"
        ).fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _reinforce_sql(count: int) -> str:
    # ?1 at, ?2 reinforced (0/1), ?3 value, ?4 alpha, ?5 cooldown seconds; paths from ?6 on.
    values = ", ".join(
        f"(?{6 + i}, 1, ?2, ?3, ?1, CASE WHEN ?2 = 0 THEN NULL ELSE ?1 END, ?1)"
        for i in range(count)
    )
    return f"""
        INSERT INTO {STATE_SCHEMA}.access
          (path, access_count, reinforcement_count, outcome_score,
           last_accessed_at, last_reinforced_at, updated_at)
        VALUES {values}
        ON CONFLICT(path) DO UPDATE SET
          access_count = access_count + 1,
          reinforcement_count = reinforcement_count + ?2,
          outcome_score = CASE WHEN ?2 = 0 THEN outcome_score
            ELSE max(-1.0, min(1.0, outcome_score * (1 - ?4) + ?3 * ?4)) END,
          last_accessed_at = ?1,
          last_reinforced_at = CASE WHEN ?2 = 0 THEN last_reinforced_at ELSE ?1 END,
          updated_at = ?1
        WHERE access.last_accessed_at IS NULL
           OR CAST(strftime('%s', ?1) AS INTEGER)
              - CAST(strftime('%s', access.last_accessed_at) AS INTEGER) >= ?5
        RETURNING path
    """


def reinforce(
    conn: sqlite3.Connection,
    paths: Iterable[str],
    signal: str,
    now: datetime,
    cooldown_s: int = REINFORCE_COOLDOWN_S,
) -> ReinforceResult:
    """Bump ``state.access`` for every path past its cooldown; report bumped and cooled-down.

    A bump always raises ``access_count``; a non-neutral signal also raises
    ``reinforcement_count`` and moves ``outcome_score``: a first row takes the signal's value,
    later bumps an EWMA with weight 0.3, clamped to [-1, 1] inside the statement (the column's
    CHECK would refuse a float that strayed). Being read is evidence of relevance, not of
    correctness, hence the neutral case. A stamp exactly ``cooldown_s`` old is bumpable. A
    repeated path counts once; without a state plane nothing is bumped.
    """
    value = signal_value(signal)
    targets = list(dict.fromkeys(p for p in paths if p))
    if not targets or not has_state(conn):
        return {"bumped": [], "cooled_down": targets}
    at = iso_ms(now)
    reinforced = 0 if value == 0 else 1
    changed: set[str] = set()
    try:
        with transaction(conn):
            for batch in _batches(targets, REINFORCE_PATH_BATCH):
                params: list[Any] = [at, reinforced, value, OUTCOME_EWMA_ALPHA, cooldown_s]
                params.extend(batch)
                rows = conn.execute(_reinforce_sql(len(batch)), params).fetchall()
                changed.update(row[0] for row in rows)
    except sqlite3.Error as exc:
        raise StorageFailure("state.reinforce failed", {"operation": "state.reinforce"}) from exc
    return {
        "bumped": [p for p in targets if p in changed],
        "cooled_down": [p for p in targets if p not in changed],
    }


def access_row(conn: sqlite3.Connection, path: str) -> dict[str, Any] | None:
    """One ``state.access`` row as a dict, or None."""
    cur = conn.execute(
        f"""SELECT path, access_count, reinforcement_count, outcome_score,
                   last_accessed_at, last_reinforced_at, updated_at
            FROM {STATE_SCHEMA}.access WHERE path = ?""",
        (path,),
    )
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cur.description], row, strict=True))
