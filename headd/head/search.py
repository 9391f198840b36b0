"""Search over one view: a BM25 arm and an optional cosine arm, fused by reciprocal rank.

The rules are memhtml's head, exactly (seed 001, design brief "Exact search semantics"):

- The lexical arm is BM25 over the version's lexical index (active records only), each distinct
  query token once, best :data:`LEXICAL_ARM_LIMIT` kept. The vector arm, which runs only when
  both ``vectors`` and ``query_vector`` are given, scores each admitted active record that has a
  vector by cosine and keeps its best :data:`VECTOR_ARM_LIMIT`.
- Inside an arm: score descending, then path ascending; the cut follows that order even inside a
  run of equal scores; equal scores share the first rank of their run (1, 1, 3).
- ``admit`` narrows what each arm ranks before its cap; BM25's statistics stay those of every
  active record.
- Fusion: ``weight / (rank + 60)`` per arm, lexical share first, then vector.
- Recency only breaks exact ties: fused score descending, then newest first by event time (else
  update time; clamped to ``now`` when ``now`` sorts earlier), then path ascending. Strings compare
  as UTF-16 code units. No arm, no hit.
- A hit lists its arms in the order lexical, recency, vector; ``recency`` when its fused score
  equals a neighbour's anywhere in the fused list (even past the limit).

Pure: never embeds, never reads a clock, never does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Protocol

import msgspec
import numpy as np

from headd.head.ids import PATH_IDS, utf16_key
from headd.head.indexes import HeadView, IndexedView, Indexes, indexes_of
from headd.head.lexical import bm25_scores
from headd.head.vectors import VectorCache
from headd.record import MemoryRecord

RRF_K: Final = 60
LEXICAL_WEIGHT: Final = 1.0
VECTOR_WEIGHT: Final = 1.0
LEXICAL_ARM_LIMIT: Final = 40
VECTOR_ARM_LIMIT: Final = 40
DEFAULT_LIMIT: Final = 10

Admit = Callable[[MemoryRecord], bool]


class HeadVectors(Protocol):
    """Vectors by content hash (a dict fits; so does :class:`headd.head.vectors.VectorCache`)."""

    def get(self, content_hash: str, /) -> Sequence[float] | np.ndarray | None: ...


class SearchHit(msgspec.Struct, frozen=True):
    path: str
    score: float
    claim: str
    title: str
    #: Subset of ("lexical", "recency", "vector"), in that order.
    arms: tuple[str, ...]


def _ranked(scored: list[tuple[float, str, str]], limit: int) -> list[tuple[str, int]]:
    """(score, utf16 key, path) -> [(path, rank)]: best first, cut at ``limit``, shared ranks."""
    scored.sort(key=lambda item: item[1])
    scored.sort(key=lambda item: item[0], reverse=True)
    out: list[tuple[str, int]] = []
    previous_score: float | None = None
    rank = 0
    for index, (score, _key, path) in enumerate(scored[:limit]):
        if previous_score is None or score != previous_score:
            rank = index + 1
            previous_score = score
        out.append((path, rank))
    return out


def _lexical_arm(indexes: Indexes, query: str, admit: Admit | None) -> list[tuple[str, int]]:
    ids, scores = bm25_scores(indexes.lexical, query)
    count = int(ids.shape[0])
    if count == 0:
        return []
    records = indexes.records
    # Walk candidates in score order, a run of equal scores at a time, until the cap is full and
    # the run that filled it is finished; only those runs are sorted by path and admitted.
    order = np.argsort(-scores, kind="stable")
    sorted_ids = ids[order]
    sorted_scores = scores[order]
    boundaries = np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]) + 1
    starts = [0, *boundaries.tolist()]
    ends = [*boundaries.tolist(), count]
    kept: list[tuple[float, str, str]] = []
    for start, end in zip(starts, ends, strict=True):
        if len(kept) >= LEXICAL_ARM_LIMIT:
            break
        score = float(sorted_scores[start])
        for ident in sorted_ids[start:end].tolist():
            path = PATH_IDS.path(ident)
            if admit is not None:
                record = records.get(path)
                if record is None or not admit(record):
                    continue
            kept.append((score, PATH_IDS.key(ident), path))
    return _ranked(kept, LEXICAL_ARM_LIMIT)


def _cosine(vector: np.ndarray, query: np.ndarray, query_norm: float) -> float:
    norm = float(np.sqrt(np.dot(vector, vector)))
    if norm == 0.0 or query_norm == 0.0:
        return 0.0
    return float(np.dot(vector, query)) / (norm * query_norm)


def _vector_arm(
    indexes: Indexes, vectors: HeadVectors, query_vector: object, admit: Admit | None
) -> list[tuple[str, int]]:
    ranked = getattr(vectors, "ranked", None)
    if ranked is not None:  # a per-version matrix (``VersionMatrix``) ranks in one product
        return _ranked(ranked(query_vector, admit, VECTOR_ARM_LIMIT), VECTOR_ARM_LIMIT)
    candidates = [r for r in indexes.active if admit is None or admit(r)]
    scored: list[tuple[float, str, str]] = []
    if isinstance(vectors, VectorCache):
        cosines = vectors.cosines([r.content_hash for r in candidates], query_vector)  # type: ignore[arg-type]
        for record, cosine in zip(candidates, cosines, strict=True):
            if cosine is not None:
                scored.append((cosine, utf16_key(record.path), record.path))
        return _ranked(scored, VECTOR_ARM_LIMIT)
    query = np.asarray(query_vector, dtype=np.float64)
    query_norm = float(np.sqrt(np.dot(query, query)))
    for record in candidates:
        vector = vectors.get(record.content_hash)
        if vector is None:
            continue
        score = _cosine(np.asarray(vector, dtype=np.float64), query, query_norm)
        scored.append((score, utf16_key(record.path), record.path))
    return _ranked(scored, VECTOR_ARM_LIMIT)


def _recency_key(record: MemoryRecord, now: str | None) -> str:
    at = record.event_at if record.event_at is not None else (record.updated_at or "")
    if now is not None and utf16_key(at) > utf16_key(now):
        return utf16_key(now)
    return utf16_key(at)


def search_head(
    view: HeadView | IndexedView,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    now: str | None = None,
    admit: Admit | None = None,
    vectors: HeadVectors | None = None,
    query_vector: Sequence[float] | np.ndarray | None = None,
) -> list[SearchHit]:
    """The view's active records ranked for ``query`` (see the module docstring for the rules)."""
    indexes = indexes_of(view)
    lexical = _lexical_arm(indexes, query, admit)
    vector: list[tuple[str, int]] | None = None
    if vectors is not None and query_vector is not None:
        vector = _vector_arm(indexes, vectors, query_vector, admit)
    fused: dict[str, float] = {}
    for path, rank in lexical:
        fused[path] = fused.get(path, 0.0) + LEXICAL_WEIGHT / (rank + RRF_K)
    for path, rank in vector or ():
        fused[path] = fused.get(path, 0.0) + VECTOR_WEIGHT / (rank + RRF_K)
    if not fused:
        return []
    records = indexes.records
    rows: list[tuple[float, str, str, str]] = []
    for path, score in fused.items():
        record = records.get(path)
        if record is not None:
            rows.append((score, _recency_key(record, now), utf16_key(path), path))
    rows.sort(key=lambda row: row[2])
    rows.sort(key=lambda row: row[1], reverse=True)
    rows.sort(key=lambda row: row[0], reverse=True)
    tied: set[str] = set()
    for current, following in zip(rows, rows[1:], strict=False):
        if current[0] == following[0]:
            tied.add(current[3])
            tied.add(following[3])
    lexical_paths = {path for path, _ in lexical}
    vector_paths = {path for path, _ in vector or ()}
    hits: list[SearchHit] = []
    for score, _recency, _key, path in rows[: max(0, limit)]:
        record = records[path]
        arms: list[str] = []
        if path in lexical_paths:
            arms.append("lexical")
        if path in tied:
            arms.append("recency")
        if path in vector_paths:
            arms.append("vector")
        hits.append(SearchHit(path, score, record.claim, record.title, tuple(arms)))
    return hits
