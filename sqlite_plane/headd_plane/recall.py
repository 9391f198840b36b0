"""``recall``: the same fusion and polarity step as search, folded into a disclosure pack.

The pool is ``DEFAULT_SEARCH_LIMIT * MMR_POOL_FACTOR`` fused candidates, kept in rank order (no
MMR: the fold's per-entity cap is recall's diversity). A caller holding a better ranking passes it
as ``ranked`` (the daemon passes its head search's, over the head's vector cache, so one fill
serves search and recall and recall ranks as search does); the plane's own fusion (without its
vector arm then) fills the rest of the pool, as it ranks the whole pool without one. Arcs fold
under their own envelope (``ARC_BODY_BUDGET``), ordinary memories under the caller's
``budget_chars`` or ``MEMORY_BODY_BUDGET``. Only ``disclosure_text`` is ever quoted: the claim, summaries, facets
and citations, never a ``<details>`` body or an ``<aside>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from headd.wire.plane_answers import RecallAnswer

from .disclosure import (
    ARC_BODY_BUDGET,
    MEMORY_BODY_BUDGET,
    DisclosureCandidate,
    DisclosureFold,
    fold_disclosure,
)
from .retrieval import DEFAULT_SEARCH_LIMIT, MMR_POOL_FACTOR, Retrieval
from .scope import Scope

#: How many ranked candidates recall folds.
RECALL_POOL = DEFAULT_SEARCH_LIMIT * MMR_POOL_FACTOR


@dataclass(frozen=True)
class RankedPool:
    """A ranking made elsewhere: paths best first, and what its vector arm saw."""

    paths: list[str]
    degraded: bool
    vector_coverage: float


@dataclass
class RecallPack:
    arcs: DisclosureFold
    memories: DisclosureFold
    spent_chars: int
    truncated: bool
    degraded: bool
    vector_coverage: float

    def answer(self, sha: str) -> RecallAnswer:
        """The wire's pack at the indexed commit ``sha``: both folds' quotes and index lines
        (arcs first), and the two folds themselves."""
        return RecallAnswer(
            sha=sha,
            entries=self.arcs.disclosed + self.memories.disclosed,
            index_lines=self.arcs.index_lines + self.memories.index_lines,
            spent=self.spent_chars,
            truncated=self.truncated,
            arcs=self.arcs,
            memories=self.memories,
            degraded=self.degraded,
            vector_coverage=self.vector_coverage,
        )


def recall(
    retrieval: Retrieval,
    query: str,
    scope: Scope | None = None,
    budget_chars: int | None = None,
    now_epoch: float | None = None,
    ranked: RankedPool | None = None,
) -> RecallPack:
    scope = scope or Scope()
    budget = MEMORY_BODY_BUDGET if budget_chars is None else budget_chars
    vector = None
    if ranked is None:
        vector, coverage = retrieval.gated_query_vector(query)
        degraded, vector_coverage = vector is None, coverage.coverage
    else:
        degraded, vector_coverage = ranked.degraded, ranked.vector_coverage
    with retrieval.db.reading():
        pool = retrieval.fuse(query, scope, RECALL_POOL, vector, now_epoch).paths
        if ranked is not None:  # the caller's ranking first, the plane's arms after it
            pool = list(dict.fromkeys([*ranked.paths, *pool]))[:RECALL_POOL]
        rows = [row for row, _, _ in retrieval.polarity_ordered(query, retrieval.hydrate(pool))]
    candidates = [
        DisclosureCandidate(
            path=row["path"],
            title=row["title"],
            claim=row["gist"],
            memory_type=row["memory_type"],
            disclosure_text=row["disclosure_text"],
            entity_names=tuple(row["entity_names"].split("\n")) if row["entity_names"] else (),
        )
        for row in rows
    ]
    arcs = fold_disclosure([c for c in candidates if c.memory_type == "arc"], ARC_BODY_BUDGET)
    memories = fold_disclosure([c for c in candidates if c.memory_type != "arc"], budget)
    return RecallPack(
        arcs=arcs,
        memories=memories,
        spent_chars=arcs.spent_chars + memories.spent_chars,
        truncated=arcs.truncated or memories.truncated,
        degraded=degraded,
        vector_coverage=vector_coverage,
    )
