"""The polarity step: a candidate whose negation disagrees with the query drops below any
near-identical candidate (cosine >= 0.9) that agrees with it. Pure.

Without it a memory and its negated twin ("X is safe" / "X is not safe") rank by fusion alone,
and the one contradicting the question can come first. Scores start as ``1 / position`` (fusion
rank stands in for relevance); an out-of-order twin gets half the lowest agreeing twin's score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from headd.head.negation import negation_divergent
from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from .mmr import cosine

TWIN_COSINE = 0.9
POLARITY_DEMOTION = 0.5
POLARITY_TEXT_CHARS = 2000

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class PolarityRow(Generic[R]):
    path: str
    claim: str
    body_text: str
    vector: np.ndarray | None
    row: R


@dataclass(frozen=True, slots=True)
class Scored(Generic[R]):
    item: PolarityRow[R]
    score: float


def polarity_scored(query: str, rows: Sequence[PolarityRow[R]]) -> list[Scored[R]]:
    scores = [1.0 / (i + 1) for i in range(len(rows))]
    texts = [r.claim if r.claim.strip() else r.body_text[:POLARITY_TEXT_CHARS] for r in rows]
    disagrees = [negation_divergent(query, t) for t in texts]
    for at, row in enumerate(rows):
        if not disagrees[at] or row.vector is None:
            continue
        floor: float | None = None
        for other, twin in enumerate(rows):
            if other == at or disagrees[other] or twin.vector is None:
                continue
            if cosine(row.vector, twin.vector) < TWIN_COSINE:
                continue
            if floor is None or scores[other] < floor:
                floor = scores[other]
        if floor is not None and scores[at] > floor:
            scores[at] = floor * POLARITY_DEMOTION
    ranked = [Scored(row, scores[i]) for i, row in enumerate(rows)]
    ranked.sort(key=lambda s: (-s.score, s.item.path))
    return ranked
