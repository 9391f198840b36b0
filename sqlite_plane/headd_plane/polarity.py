"""The polarity step: a candidate whose negation disagrees with the query drops below any
near-identical candidate (cosine >= 0.9) that agrees with it. Pure.

Without it a memory and its negated twin ("X is safe" / "X is not safe") rank by fusion alone,
and the one contradicting the question can come first. Scores start as ``1 / position`` (fusion
rank stands in for relevance); an out-of-order twin gets half the lowest agreeing twin's score.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from .mmr import cosine

TWIN_COSINE = 0.9
POLARITY_DEMOTION = 0.5
POLARITY_TEXT_CHARS = 2000

NEGATION_MARKERS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "cannot",
        "without",
        "neither",
        "nor",
        "avoid",
        "disallow",
        "disallowed",
        "forbidden",
        "unsafe",
        "invalid",
        "false",
        "fail",
        "fails",
        "failed",
        "deny",
        "denied",
        "reject",
        "rejected",
    ]
)
CONTRACTIONS = (
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("weren't", "were not"),
    ("don't", "do not"),
    ("doesn't", "does not"),
    ("didn't", "did not"),
    ("won't", "will not"),
    ("can't", "can not"),
    ("cannot", "can not"),
    ("couldn't", "could not"),
    ("shouldn't", "should not"),
    ("wouldn't", "would not"),
    ("mustn't", "must not"),
    ("haven't", "have not"),
    ("hasn't", "has not"),
    ("hadn't", "had not"),
    ("n't", " not"),
)
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")

R = TypeVar("R")


def _tokens(text: str) -> list[str]:
    out = unicodedata.normalize("NFC", text).lower()
    for pattern, replacement in CONTRACTIONS:
        out = out.replace(pattern, replacement)
    return _WORD.findall(out)


def negated(text: str) -> bool:
    return any(token in NEGATION_MARKERS for token in _tokens(text))


def negation_divergent(a: str, b: str) -> bool:
    return negated(a) != negated(b)


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
