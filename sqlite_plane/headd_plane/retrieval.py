"""Four-arm retrieval over ``index.db``: ``search`` (ranked hits) and ``recall`` (a pack).

Both run the same steps, so a ranking change cannot reach one and not the other:

1. read vector coverage; below the floor, with no embedder, or when the embedder fails, the
   vector arm is left out and the result says ``degraded``;
2. fuse the active arms in one statement over the one scope filter; the lexical arm binds the
   all-terms MATCH form when some file in scope holds every term, else the any-term form;
3. hydrate the pool (``limit * MMR_POOL_FACTOR`` paths) in one statement;
4. the polarity step, then MMR (search only) picks the final hits; one statement fetches their
   snippets.

An empty result of a narrowing scope says ``scope_empty`` and, without ``as_of``, how many
archived files the same scope matches. Retrieval never names a trace table.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from headd.lazy_import import LazyModule
from headd.wire.plane_answers import ArchivedMatch, IndexHit, IndexSearchAnswer

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from .coverage import VECTOR_COVERAGE_FLOOR, VectorCoverage, read_vector_coverage
from .db import PlaneDb
from .embedding import PlaneEmbedder, from_blob, to_blob
from .fts_query import fts_query_forms
from .mmr import MMR_LAMBDA, MmrCandidate, apply_mmr
from .polarity import PolarityRow, polarity_scored
from .retrieval_sql import (
    PARAM_QUERY_VECTOR,
    active_arms,
    build_fts_probe_sql,
    build_rrf_sql,
    build_snippet_sql,
    now_sql,
    rrf_params,
    truncate_snippet,
)
from .scope import AssembledScope, Scope, assemble_scope

log = logging.getLogger(__name__)

DEFAULT_ARM_LIMIT = 40
DEFAULT_SEARCH_LIMIT = 10
MMR_POOL_FACTOR = 3

_SUPERSEDED_BY = """(SELECT g.src_path FROM edges g
                  WHERE g.dst_path = f.path AND g.edge_class = 'memory'
                    AND g.rel = 'supersedes' AND g.derived = 0
                  ORDER BY g.created_at DESC, g.src_path ASC LIMIT 1)"""


#: One hit as the wire carries it.
SearchHit = IndexHit


@dataclass
class SearchResult:
    hits: list[SearchHit]
    degraded: bool
    vector_coverage: float
    arms: list[str]
    entity_scope: str | None
    scope_empty: bool
    archived_matches: int = 0
    archived: list[ArchivedMatch] = field(default_factory=list)
    took_ms: float = 0.0

    def answer(self, sha: str) -> IndexSearchAnswer:
        """The wire's answer at the indexed commit ``sha``."""
        return IndexSearchAnswer(
            sha=sha,
            plane="index",
            hits=self.hits,
            arms=self.arms,
            degraded=self.degraded,
            vector_coverage=self.vector_coverage,
            entity_scope=self.entity_scope,
            scope_empty=self.scope_empty,
            archived_matches=self.archived_matches,
            archived=self.archived,
            took_ms=self.took_ms,
        )


@dataclass(frozen=True)
class Fused:
    paths: list[str]
    arms_by_path: dict[str, list[str]]
    sql: str


class Retrieval:
    """Reads only; safe on a read-only connection."""

    def __init__(
        self,
        db: PlaneDb,
        embedder: PlaneEmbedder | None = None,
        space: str | None = None,
        coverage_floor: float = VECTOR_COVERAGE_FLOOR,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.space = space if space is not None else (embedder.space if embedder else None)
        self.coverage_floor = coverage_floor

    # -- the shared steps -----------------------------------------------------------------------

    def gated_query_vector(self, query: str) -> tuple[bytes | None, VectorCoverage]:
        coverage = read_vector_coverage(self.db, self.space)
        if coverage.coverage < self.coverage_floor or self.embedder is None:
            if self.embedder is not None:
                log.warning(
                    "retrieval: lexical floor, vector coverage %d of %d chunks below %s",
                    coverage.embeddings,
                    coverage.chunks,
                    self.coverage_floor,
                )
            return None, coverage
        try:
            vector = self.embedder.embed_query(query)
        except Exception as error:  # the embedder is foreign code: any failure degrades
            log.error("retrieval: lexical floor, embedder failed (%s)", type(error).__name__)
            return None, coverage
        return to_blob(vector), coverage

    def _holds_every_term(self, all_form: str, scope: AssembledScope) -> bool:
        sql = build_fts_probe_sql(scope)
        rows = self.db.all(
            sql, rrf_params(sql, all_form, DEFAULT_ARM_LIMIT, 1, None, scope.params), op="probe"
        )
        return len(rows) > 0

    def fuse(
        self,
        query: str,
        scope: Scope,
        limit: int,
        vector: bytes | None,
        now_epoch: float | None,
    ) -> Fused:
        assembled = assemble_scope(scope)
        forms = fts_query_forms(query)
        if forms.all == forms.any or self._holds_every_term(forms.all, assembled):
            match = forms.all
        else:
            match = forms.any
        arms = active_arms(
            has_query_vector=vector is not None,
            has_state=self.db.has_state,
            has_query_terms=match != "",
        )
        sql = build_rrf_sql(arms, assembled, now_sql(now_epoch))
        if sql is None:
            return Fused([], {}, "")
        params = rrf_params(sql, match, DEFAULT_ARM_LIMIT, limit, vector, assembled.params)
        rows = self.db.all(sql, params, op="search.fuse")
        return Fused(
            [row["path"] for row in rows],
            {row["path"]: sorted(str(row["arms"]).split(",")) for row in rows},
            sql,
        )

    def hydrate(self, paths: list[str]) -> list[dict[str, Any]]:
        if not paths:
            return []
        holes = ", ".join("?" for _ in paths)
        rows = self.db.all(
            f"""SELECT f.path AS path, f.title AS title, f.gist AS gist,
                f.memory_type AS memory_type, f.confidence AS confidence,
                f.updated_at AS updated_at, f.body_text AS body_text,
                f.disclosure_text AS disclosure_text,
                (SELECT group_concat(e.entity_name, char(10)) FROM file_entities e
                   WHERE e.path = f.path) AS entity_names,
                (SELECT group_concat(e.entity_type || ':' || e.entity_name, char(10))
                   FROM file_entities e WHERE e.path = f.path) AS entity_refs,
                {_SUPERSEDED_BY} AS superseded_by,
                (SELECT em.vec FROM chunk_spans c JOIN embeddings em ON em.chunk_id = c.chunk_id
                  WHERE c.path = f.path ORDER BY c.ordinal LIMIT 1) AS vec
         FROM files f WHERE f.path IN ({holes})""",
            paths,
            op="search.hydrate",
        )
        by_path = {row["path"]: dict(zip(row.keys(), tuple(row), strict=True)) for row in rows}
        return [by_path[p] for p in paths if p in by_path]

    def polarity_ordered(
        self, query: str, rows: list[dict[str, Any]]
    ) -> list[tuple[dict[str, Any], float, np.ndarray | None]]:
        items = [
            PolarityRow(r["path"], r["gist"], r["body_text"], from_blob(r["vec"]), r) for r in rows
        ]
        return [(s.item.row, s.score, s.item.vector) for s in polarity_scored(query, items)]

    def snippets(self, paths: list[str], vector: bytes | None) -> dict[str, str]:
        sql = build_snippet_sql(len(paths), vector is not None)
        if sql is None:
            return {}
        params: list[Any] = list(paths) if vector is None else [vector, *paths]
        best: dict[str, tuple[float | None, int, str]] = {}
        for row in self.db.all(sql, params, op="search.snippets"):
            challenger = (row["dist"], int(row["ordinal"]), str(row["text"]))
            incumbent = best.get(row["path"])
            if incumbent is None or _beats(challenger, incumbent):
                best[row["path"]] = challenger
        return {path: truncate_snippet(text) for path, (_, _, text) in best.items()}

    def archived_in_scope(self, scope: Scope, limit: int) -> tuple[int, list[ArchivedMatch]]:
        assembled = assemble_scope(replace(scope, include_archived=True, as_of=None))
        limit_slot = PARAM_QUERY_VECTOR + len(assembled.params) + 1
        rows = self.db.all(
            f"""SELECT f.path AS path, {_SUPERSEDED_BY} AS superseded_by,
                COUNT(*) OVER () AS total
         FROM files f
         WHERE f.archived = 1{assembled.for_alias("f")}
         ORDER BY f.path ASC
         LIMIT ?{limit_slot}""",
            (None, None, None, None, *assembled.params, max(1, limit)),
            op="search.archived",
        )
        total = int(rows[0]["total"]) if rows else 0
        return total, [ArchivedMatch(r["path"], r["superseded_by"]) for r in rows]

    # -- the two doors --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        scope: Scope | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        now_epoch: float | None = None,
    ) -> SearchResult:
        started = time.perf_counter()
        scope = scope or Scope()
        vector, coverage = self.gated_query_vector(query)
        with self.db.reading():
            fused = self.fuse(query, scope, limit * MMR_POOL_FACTOR, vector, now_epoch)
            rows = self.hydrate(fused.paths)
            ordered_rows = self.polarity_ordered(query, rows)
            chosen = apply_mmr(
                [MmrCandidate(r["path"], score, vec) for r, score, vec in ordered_rows],
                limit,
                MMR_LAMBDA,
            )
            by_path = {r["path"]: r for r in rows}
            snippet_by_path = self.snippets([c.path for c in chosen], vector)
            scope_empty = not chosen and scope.narrows()
            archived_matches, archived = (
                self.archived_in_scope(scope, limit) if scope_empty and not scope.as_of else (0, [])
            )
        hits = [
            SearchHit(
                path=c.path,
                title=by_path[c.path]["title"],
                claim=by_path[c.path]["gist"],
                memory_type=by_path[c.path]["memory_type"],
                score=c.score,
                confidence=by_path[c.path]["confidence"],
                updated_at=by_path[c.path]["updated_at"],
                snippet=snippet_by_path.get(c.path, ""),
                entities=_entity_refs(by_path[c.path]["entity_refs"]),
                superseded_by=by_path[c.path]["superseded_by"],
                arms=fused.arms_by_path.get(c.path, []),
            )
            for c in chosen
        ]
        return SearchResult(
            hits=hits,
            degraded=vector is None,
            vector_coverage=coverage.coverage,
            arms=[n for n in ("fts", "vector", "recency", "salience") if f"{n} AS (" in fused.sql],
            entity_scope=scope.entity or None,
            scope_empty=scope_empty,
            archived_matches=archived_matches,
            archived=archived,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
        )


def _beats(
    challenger: tuple[float | None, int, str], incumbent: tuple[float | None, int, str]
) -> bool:
    c_dist, c_ord, _ = challenger
    i_dist, i_ord, _ = incumbent
    if c_dist is not None and i_dist is None:
        return True
    if c_dist is None and i_dist is not None:
        return False
    if c_dist is not None and i_dist is not None and c_dist != i_dist:
        return c_dist < i_dist
    return c_ord < i_ord


def _entity_refs(joined: str | None) -> list[str]:
    if joined is None:
        return []
    return sorted({ref for ref in joined.split("\n") if ref})
