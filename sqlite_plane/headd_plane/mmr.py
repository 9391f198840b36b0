"""Maximal marginal relevance over a ranked pool, and the cosine it needs. Pure.

``lambda * relevance - (1 - lambda) * max similarity to anything already picked``; a candidate
without a vector carries no penalty and is never a penalty source, so on the degraded path
(no vectors) MMR keeps the input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

MMR_LAMBDA = 0.5


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    n = min(a.size, b.size)
    x = a[:n].astype(np.float64)
    y = b[:n].astype(np.float64)
    norms = float(np.linalg.norm(x)) * float(np.linalg.norm(y))
    if norms == 0.0:
        return 0.0
    similarity = float(np.dot(x, y)) / norms
    if similarity != similarity:
        return 0.0
    return max(-1.0, min(1.0, similarity))


@dataclass(frozen=True, slots=True)
class MmrCandidate:
    path: str
    score: float
    vector: np.ndarray | None


def apply_mmr(
    candidates: Sequence[MmrCandidate], limit: int, lam: float = MMR_LAMBDA
) -> list[MmrCandidate]:
    if limit <= 0:
        return []
    if lam >= 1 or len(candidates) <= 1:
        return list(candidates[:limit])
    pool = list(candidates)
    penalties = [0.0] * len(pool)
    selected: list[MmrCandidate] = []
    while pool and len(selected) < limit:
        newest = selected[-1] if selected else None
        if newest is not None and newest.vector is not None:
            for i, candidate in enumerate(pool):
                if candidate.vector is None:
                    continue
                similarity = cosine(candidate.vector, newest.vector)
                if similarity > penalties[i]:
                    penalties[i] = similarity
        best, best_value = 0, float("-inf")
        for i, candidate in enumerate(pool):
            value = lam * candidate.score - (1 - lam) * penalties[i]
            if value > best_value:
                best, best_value = i, value
        selected.append(pool.pop(best))
        penalties.pop(best)
    return selected
