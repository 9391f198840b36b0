"""The four ranking arms and their fold into ONE reciprocal-rank-fusion statement (memhtml's).

Arms are data: each returns ``(path, rank)`` with a 1-based rank over at most ``?2`` candidates,
and the fold sums ``weight / (rank + 60)`` per path, ties broken by path. Placeholders are
numbered (``?1`` match text, ``?2`` per-arm limit, ``?3`` final limit, ``?4`` query vector,
``?5``.. the scope) so dropping an arm moves no other value. Weights and the salience clock are
inlined literals: trusted configuration, never caller text. Pure string building.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .db import SqlValue
from .scope import AssembledScope

RRF_K = 60
PARAM_QUERY = 1
PARAM_ARM_LIMIT = 2
PARAM_FINAL_LIMIT = 3
PARAM_QUERY_VECTOR = 4
SNIPPET_MAX_CHARS = 700
SALIENCE_EXCLUDED_TYPE = "task"
SALIENCE_EXCLUDED_PREFIX = "resources/people/"
FTS_INDEX_NAME = "files_fts"


@dataclass(frozen=True, slots=True)
class RankArm:
    name: str
    weight: float
    needs_embedding: bool
    needs_state: bool
    needs_query_terms: bool
    sql: Callable[[AssembledScope, str], str]


def _fts_sql(scope: AssembledScope, _now: str) -> str:
    return f"""SELECT path, ROW_NUMBER() OVER () AS rank FROM (
       SELECT files.path AS path FROM {FTS_INDEX_NAME}
       JOIN files ON files.rowid = {FTS_INDEX_NAME}.rowid
       WHERE {FTS_INDEX_NAME} MATCH ?{PARAM_QUERY}{scope.for_alias("files")}
       ORDER BY bm25({FTS_INDEX_NAME})
       LIMIT ?{PARAM_ARM_LIMIT}
     )"""


def _vector_sql(scope: AssembledScope, _now: str) -> str:
    # A file counts once, by its best chunk: length must not outrank relevance.
    return f"""SELECT path, ROW_NUMBER() OVER (ORDER BY dist, path) AS rank FROM (
       SELECT c.path AS path, min(vector_distance_cos(e.vec, ?{PARAM_QUERY_VECTOR})) AS dist
       FROM chunk_spans c
       JOIN embeddings e ON e.chunk_id = c.chunk_id
       JOIN files f ON f.path = c.path
       WHERE 1 = 1{scope.for_alias("f")}
       GROUP BY c.path
       ORDER BY dist, path
       LIMIT ?{PARAM_ARM_LIMIT}
     )"""


def _recency_sql(scope: AssembledScope, _now: str) -> str:
    return f"""SELECT path, ROW_NUMBER() OVER (ORDER BY coalesce(event_at, updated_at) DESC, path ASC) AS rank
     FROM (
       SELECT path, event_at, updated_at FROM files
       WHERE 1 = 1{scope.for_alias("files")}
       ORDER BY coalesce(event_at, updated_at) DESC, path ASC
       LIMIT ?{PARAM_ARM_LIMIT}
     )"""


def _salience_sql(scope: AssembledScope, now: str) -> str:
    # exp(-0.01 * hours since last access, or since updated_at) + ln(1 + accesses) + max(outcome, 0).
    # Tasks and person records are left out of this arm only; they keep their other ranks.
    return f"""SELECT path, ROW_NUMBER() OVER (ORDER BY score DESC, path ASC) AS rank FROM (
       SELECT f.path AS path,
              exp(-0.01 * ({now} - unixepoch(coalesce(a.last_accessed_at, f.updated_at))) / 3600.0)
              + ln(1 + coalesce(a.access_count, 0))
              + max(coalesce(a.outcome_score, 0.0), 0.0) AS score
       FROM files f
       LEFT JOIN state.access a ON a.path = f.path
       WHERE f.memory_type <> '{SALIENCE_EXCLUDED_TYPE}'
         AND f.path NOT LIKE '{SALIENCE_EXCLUDED_PREFIX}%'{scope.for_alias("f")}
       ORDER BY score DESC, path ASC
       LIMIT ?{PARAM_ARM_LIMIT}
     )"""


RANK_ARMS: tuple[RankArm, ...] = (
    RankArm("fts", 1.0, False, False, True, _fts_sql),
    RankArm("vector", 1.0, True, False, False, _vector_sql),
    RankArm("recency", 0.5, False, False, False, _recency_sql),
    RankArm("salience", 0.4, False, True, False, _salience_sql),
)


def active_arms(
    has_query_vector: bool,
    has_state: bool,
    has_query_terms: bool,
    arms: Sequence[RankArm] = RANK_ARMS,
) -> list[RankArm]:
    return [
        arm
        for arm in arms
        if arm.weight > 0
        and (not arm.needs_embedding or has_query_vector)
        and (not arm.needs_state or has_state)
        and (not arm.needs_query_terms or has_query_terms)
    ]


def now_sql(now_epoch: float | None) -> str:
    """The salience clock: an injected instant as a numeric literal, else SQLite's ``now``."""
    return "unixepoch('now')" if now_epoch is None else repr(float(now_epoch))


def build_rrf_sql(arms: Sequence[RankArm], scope: AssembledScope, now: str) -> str | None:
    """The one fused statement: ``(path, score, arms)``, best first; None when no arm runs."""
    if not arms:
        return None
    ctes = ",\n".join(f"{arm.name} AS (\n{arm.sql(scope, now)}\n)" for arm in arms)
    union = "\n     UNION ALL ".join(
        f"SELECT path, '{arm.name}' AS arm, {arm.weight:.4f} / (rank + {RRF_K}) AS s "
        f"FROM {arm.name}"
        for arm in arms
    )
    return (
        f"WITH {ctes},\n     rrf AS ({union})\n"
        "     SELECT path, SUM(s) AS score, group_concat(arm) AS arms FROM rrf GROUP BY path "
        f"ORDER BY score DESC, path ASC LIMIT ?{PARAM_FINAL_LIMIT}"
    )


def build_fts_probe_sql(scope: AssembledScope) -> str:
    """Does any file in scope hold every term? One row or none."""
    return f"""SELECT 1 AS hit FROM {FTS_INDEX_NAME}
   JOIN files ON files.rowid = {FTS_INDEX_NAME}.rowid
   WHERE {FTS_INDEX_NAME} MATCH ?{PARAM_QUERY}{scope.for_alias("files")}
   LIMIT 1"""


def highest_slot(sql: str) -> int:
    return max((int(m) for m in re.findall(r"\?(\d+)", sql)), default=0)


def rrf_params(
    sql: str,
    match_query: str,
    arm_limit: int,
    final_limit: int,
    vector: bytes | None,
    scope_params: Sequence[str],
) -> tuple[SqlValue, ...]:
    """The bound tuple, trimmed to the slots the statement names (SQLite refuses extras)."""
    full: tuple[SqlValue, ...] = (match_query, arm_limit, final_limit, vector, *scope_params)
    return full[: highest_slot(sql)]


def build_snippet_sql(path_count: int, has_query_vector: bool) -> str | None:
    if path_count <= 0:
        return None
    first = 2 if has_query_vector else 1
    holes = ", ".join(f"?{first + i}" for i in range(path_count))
    if has_query_vector:
        return f"""SELECT c.path AS path, c.ordinal AS ordinal, c.text AS text,
              CASE WHEN e.chunk_id IS NULL THEN NULL ELSE vector_distance_cos(e.vec, ?1) END AS dist
       FROM chunks c
       LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id
       WHERE c.path IN ({holes})"""
    return f"SELECT path, ordinal, text, NULL AS dist FROM chunks WHERE ordinal = 0 AND path IN ({holes})"


def truncate_snippet(text: str) -> str:
    """At most SNIPPET_MAX_CHARS, the ``…`` marker inside the ceiling."""
    if len(text) <= SNIPPET_MAX_CHARS:
        return text
    return f"{text[: SNIPPET_MAX_CHARS - 1].rstrip()}…"
