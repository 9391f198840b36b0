"""Search over one view: a BM25 arm and an optional cosine arm, in one of two modes.

``SEED_EXACT`` is memhtml's head search, exactly; the head gate uses it, and a caller may ask for
it by name:

- The lexical arm is BM25 over the version's lexical index (active records only), each distinct
  query token once, best :data:`LEXICAL_ARM_LIMIT` kept. The vector arm, which runs only when
  both ``vectors`` and ``query_vector`` are given, scores each admitted active record that has a
  vector by cosine and keeps its best :data:`VECTOR_ARM_LIMIT`.
- Inside an arm: score descending, then path ascending; the cut follows that order even inside a
  run of equal scores; equal scores share the first rank of their run (1, 1, 3).
- ``admit`` narrows what each arm ranks before its cap; BM25's statistics stay those of every
  active record. A scope that reaches archived records (``admit.reaches_archived``) ranks over
  the version's index of every record instead (:attr:`Indexes.with_archived`), so an archived
  record is scored by the lexical arm beside the active ones; the vector arm holds active
  records only.
- Fusion: ``weight / (rank + 60)`` per arm, lexical share first, then vector.
- Recency only breaks exact ties: fused score descending, then newest first by event time (else
  update time; clamped to ``now`` when ``now`` sorts earlier), then path ascending. Strings compare
  as UTF-16 code units. No arm, no hit.
- A hit lists its arms in the order lexical, recency, vector; ``recency`` when its fused score
  equals a neighbour's anywhere in the fused list (even past the limit).

``HYBRID``, the default, keeps all of that but six rules (docs/design.md, "Search quality"):

- Each arm keeps its best ``max(40, limit)``, so a limit above 40 is answered in full.
- With the vector arm, the lexical arm scores the query without :data:`QUESTION_WORDS`, and by
  stems: each query word counts every form of its stem the index holds as one token
  (:mod:`headd.head.stems`, :func:`headd.head.lexical.bm25_group_scores`).
- With the vector arm, fusion is by score, not rank (:func:`_blended_rows`): each arm's share is
  its score over the arm's best, weighted :data:`LEXICAL_SHARE` and ``1 - LEXICAL_SHARE``, so a
  weak arm can add to a record but never outvote a strong arm by its scale, and cosines that tell
  no record apart leave the lexical order unchanged. Without the vector arm the answer is the
  seed's (reciprocal-rank scores of the lexical arm alone).
- With the vector arm, a conversation's turn moves toward the best fused score of its thread
  (the episodic memories of its folder at its moment; :mod:`headd.head.threads`).
- With the vector arm, a question asking when ("when did…", "how long…") adds a bonus to the
  candidates that tell a time (:mod:`headd.head.temporal`).

Pure: never embeds, never reads a clock, never does I/O. Its only state is answers about
documents that change no result: ``search_memo``'s (a record by path id, a scope's verdict) and
``temporal``'s (whether a memory tells a time, by content hash).

How a query stays cheap (p50 within 2 ms at 10,000 memories, 15 ms at 100,000): BM25 in one numpy
pass (``lexical.bm25_scores``); only a window of the best scores sorted (:data:`LEXICAL_WINDOW`);
candidates admitted from the memo in bulk; and the lexical arm alone is already in fused order, so
it is cut at the limit without a fused sort and recency is computed only for the ties returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final, Protocol

import msgspec
import numpy as np
from pyrsistent import PMap

from headd.head.ids import PATH_IDS, utf16_key
from headd.head.indexes import HeadView, IndexedView, Indexes, indexes_of
from headd.head.lexical import FloatArray, IdArray, bm25_group_scores, bm25_scores, tokenize
from headd.head.search_memo import (
    ADMITTED,
    REFUSED,
    SEARCH_MEMOS,
    UNKNOWN,
    memoizable_scope,
)
from headd.head.stems import stem_groups
from headd.head.temporal import favour_times
from headd.head.threads import lift_threads
from headd.head.vectors import VectorCache, vector_of_record
from headd.record import MemoryRecord

RRF_K: Final = 60
LEXICAL_WEIGHT: Final = 1.0
VECTOR_WEIGHT: Final = 1.0
LEXICAL_ARM_LIMIT: Final = 40
VECTOR_ARM_LIMIT: Final = 40
DEFAULT_LIMIT: Final = 10

#: The search modes: the hybrid search every caller gets by default, and the seed's exact rules
#: (the head gate's, and a caller's who asks for memhtml's answers).
HYBRID: Final = "hybrid"
SEED_EXACT: Final = "seed-exact"
SEARCH_MODES: Final = (HYBRID, SEED_EXACT)

#: The lexical arm's share of a hybrid score (the vector arm has the rest): the one constant the
#: hybrid fusion tunes (docs/design.md, "Search quality").
LEXICAL_SHARE: Final = 0.7

#: Words that ask rather than say: the hybrid search's lexical arm drops them from a question
#: (the stop words already drop "who", "when", "which"), since they match any record that asks
#: something and say nothing of what is asked about. The vector arm embeds the question whole.
QUESTION_WORDS: Final = frozenset({"what", "how", "where", "why", "whom", "whose"})

Admit = Callable[[MemoryRecord], bool]

#: A row an arm or the fusion sorts: (score, utf16 key, path, ...).
_Row = tuple[Any, ...]
_score_of = itemgetter(0)
_key_of = itemgetter(1)


class HeadVectors(Protocol):
    """Vectors by cache key, a content hash or a title's key (a dict fits; so does
    :class:`headd.head.vectors.VectorCache`); see :func:`headd.head.vectors.vector_of_record`."""

    def get(self, key: str, /) -> Sequence[float] | np.ndarray | None: ...


class SearchHit(msgspec.Struct, frozen=True):
    path: str
    score: float
    claim: str
    title: str
    #: Subset of ("lexical", "recency", "vector"), in that order.
    arms: tuple[str, ...]


#: How many of the best BM25 scores the lexical arm sorts first. The arm walks candidates best
#: first until its cap is full, and with the usual scope nearly every candidate is admitted, so
#: sorting the whole matched set (thousands of documents for a long query) is wasted; a window
#: this size almost always holds the walk, and the rest is sorted only when it does not.
LEXICAL_WINDOW: Final = 128

#: A candidate of an arm: (score, utf16 key, path, record or None when the arm did not look it up).
Candidate = tuple[float, str, str, MemoryRecord | None]


def _ranked_rows(scored: list[_Row], limit: int) -> list[tuple[int, _Row]]:
    """Rows ``(score, utf16 key, path, ...)`` best first (score descending, then key), cut at
    ``limit``, each with its rank; equal scores share the first rank of their run (1, 1, 3)."""
    scored.sort(key=_key_of)
    scored.sort(key=_score_of, reverse=True)
    out: list[tuple[int, _Row]] = []
    previous_score: float | None = None
    rank = 0
    for index, row in enumerate(scored[:limit]):
        score = row[0]
        if previous_score is None or score != previous_score:
            rank = index + 1
            previous_score = score
        out.append((rank, row))
    return out


def _best_first(ids: IdArray, scores: FloatArray) -> Iterator[tuple[IdArray, FloatArray]]:
    """(ids, scores) in chunks, score descending, each chunk ending where a run of equal scores
    ends: first every score at least the :data:`LEXICAL_WINDOW`-th best, then the rest."""
    count = int(scores.shape[0])
    if count > LEXICAL_WINDOW:
        threshold = np.partition(scores, count - LEXICAL_WINDOW)[count - LEXICAL_WINDOW]
        top = scores >= threshold
        head = np.flatnonzero(top)
        order = head[np.argsort(-scores[head], kind="stable")]
        yield ids[order], scores[order]
        rest = np.flatnonzero(~top)
        if rest.shape[0] == 0:
            return
        order = rest[np.argsort(-scores[rest], kind="stable")]
    else:
        order = np.argsort(-scores, kind="stable")
    yield ids[order], scores[order]


def _lexical_arm(
    indexes: Indexes,
    query: str,
    admit: Admit | None,
    cap: int = LEXICAL_ARM_LIMIT,
    stemmed: bool = False,
) -> list[tuple[int, Candidate]]:
    """The lexical arm's ``cap`` best candidates, ranked; with ``admit``, each carries its
    record. ``stemmed``: BM25 over the query's stems (:mod:`headd.head.stems`), not its tokens."""
    lexical = indexes.lexical
    if stemmed:
        ids, scores = bm25_group_scores(lexical, stem_groups(lexical.postings, query))
    else:
        ids, scores = bm25_scores(lexical, query)
    if ids.shape[0] == 0:
        return []
    get = indexes.records.get
    path_of, key_of = PATH_IDS.path, PATH_IDS.key
    scope = None if admit is None else memoizable_scope(admit)
    records: list[MemoryRecord | None] | None = None
    answers = None
    if scope is not None:
        memo, answers = SEARCH_MEMOS.of(indexes, lexical.capacity, scope)
        records = memo.records
    # Walk candidates in score order, a run of equal scores at a time, until the cap is full and
    # the run that filled it is finished; only those runs are sorted by path and admitted.
    kept: list[Candidate] = []
    previous: float | None = None
    for chunk_ids, chunk_scores in _best_first(ids, scores):
        id_list: list[int] = chunk_ids.tolist()
        score_list: list[float] = chunk_scores.tolist()
        size = len(id_list)
        need = cap - len(kept)
        if need <= 0:  # a chunk starts a run: the cap is full and the last run finished
            break
        known: list[int] = [UNKNOWN] * size if answers is None else answers[chunk_ids].tolist()
        # The usual case once the memo knows the version: every candidate up to the cut is
        # admitted, so the cut is where the run holding the cap's last place ends.
        cut = size
        if need < size:
            cut = need
            while cut < size and score_list[cut] == score_list[cut - 1]:
                cut += 1
        if records is not None and known[:cut].count(ADMITTED) == cut:
            taken = id_list[:cut]
            kept.extend(
                zip(
                    score_list[:cut],
                    map(key_of, taken),
                    map(path_of, taken),
                    map(records.__getitem__, taken),
                    strict=True,
                )
            )
            if cut < size:
                break
            previous = score_list[-1]
            continue
        for ident, score, answer in zip(id_list, score_list, known, strict=True):
            if score != previous:
                if len(kept) >= cap:
                    return _ranked_rows(kept, cap)
                previous = score
            if answer == REFUSED:
                continue
            path = path_of(ident)
            record = None
            if admit is not None:
                record = None if records is None else records[ident]
                if record is None:
                    record = get(path)
                    if records is not None:
                        records[ident] = record
                if answer == UNKNOWN:
                    admitted = record is not None and admit(record)
                    if answers is not None:
                        answers[ident] = ADMITTED if admitted else REFUSED
                    if not admitted:
                        continue
            kept.append((score, key_of(ident), path, record))
    return _ranked_rows(kept, cap)


def _cosine(vector: np.ndarray, query: np.ndarray, query_norm: float) -> float:
    norm = float(np.sqrt(np.dot(vector, vector)))
    if norm == 0.0 or query_norm == 0.0:
        return 0.0
    return float(np.dot(vector, query)) / (norm * query_norm)


def _vector_rows(
    indexes: Indexes, vectors: HeadVectors, query_vector: object, admit: Admit | None, cap: int
) -> list[tuple[int, _Row]]:
    """The vector arm's ``cap`` best ``(cosine, utf16 key, path)`` rows, ranked."""
    ranked = getattr(vectors, "ranked", None)
    if ranked is not None:  # a per-version matrix (``VersionMatrix``) ranks in one product
        return _ranked_rows(ranked(query_vector, admit, cap), cap)
    candidates = [r for r in indexes.active if admit is None or admit(r)]
    scored: list[_Row] = []
    if isinstance(vectors, VectorCache):
        cosines = vectors.record_cosines(candidates, query_vector)  # type: ignore[arg-type]
        for record, cosine in zip(candidates, cosines, strict=True):
            if cosine is not None:
                scored.append((cosine, utf16_key(record.path), record.path))
        return _ranked_rows(scored, cap)
    query = np.asarray(query_vector, dtype=np.float64)
    query_norm = float(np.sqrt(np.dot(query, query)))
    for record in candidates:
        vector = vector_of_record(vectors, record)
        if vector is None:
            continue
        score = _cosine(np.asarray(vector, dtype=np.float64), query, query_norm)
        scored.append((score, utf16_key(record.path), record.path))
    return _ranked_rows(scored, cap)


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
    mode: str = HYBRID,
    explain: dict[str, dict[str, float]] | None = None,
    hybrid_lexical: HybridLexicalArm | None = None,
) -> list[SearchHit]:
    """The view's active records ranked for ``query``: by ``mode``, :data:`HYBRID` (the
    default) or :data:`SEED_EXACT` (see the module docstring for both). ``explain``, when
    given, is filled with each hit's score split by arm (``lexical``, ``vector``), the parts
    summing to the hit's score; computed only for the hits returned, and only when asked.
    ``hybrid_lexical`` is :func:`hybrid_lexical_arm` of the same view, query, limit and admit,
    ranked beforehand (the daemon ranks it while the query embeds); it is used when the search
    runs hybrid with vectors, and ignored otherwise."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"unknown search mode {mode!r}")
    indexes = _indexes_for(view, admit)
    seed = mode == SEED_EXACT
    with_vectors = vectors is not None and query_vector is not None
    # With the vector arm, the hybrid's lexical arm scores the query's stems, question words
    # left out; otherwise every mode scores the seed's tokens.
    hybrid_arms = with_vectors and not seed
    if hybrid_arms and hybrid_lexical is not None:
        lexical = hybrid_lexical.ranked
    elif hybrid_arms:
        lexical = _hybrid_lexical(indexes, query, admit, limit)
    else:
        lexical_cap = LEXICAL_ARM_LIMIT if seed else max(LEXICAL_ARM_LIMIT, limit)
        lexical = _lexical_arm(indexes, query, admit, lexical_cap)
    vector: list[tuple[int, _Row]] | None = None
    if vectors is not None and query_vector is not None:
        vector_cap = VECTOR_ARM_LIMIT if seed else max(VECTOR_ARM_LIMIT, limit)
        vector = _vector_rows(indexes, vectors, query_vector, admit, vector_cap)
    records = indexes.records
    if vector is None and admit is not None:
        # The lexical arm alone, every candidate admitted (so present): its list is already in
        # fused order, since ``1 / (rank + k)`` falls as the rank grows and equal fused scores
        # are exactly equal ranks, which the arm ordered by path.
        rows = [
            (LEXICAL_WEIGHT / (rank + RRF_K), key, path, record)
            for rank, (_score, key, path, record) in lexical[: _through_run(lexical, limit)]
        ]
        hits = _hits(rows, limit, now, records, _lexical_arms)
        if explain is not None:
            explain.update(_parts(hits, lexical, None, blended=False))
        return hits
    if seed or vector is None:
        ranks = None if vector is None else [(row[2], rank) for rank, row in vector]
        rows = _fused_rows(lexical, ranks, records, admit is not None)
    else:
        rows = _blended_rows(lexical, vector, records, admit is not None, query)
    lexical_paths = {row[2] for _rank, row in lexical}
    vector_paths = {row[2] for _rank, row in vector or ()}

    def arms_of(path: str, tied: bool) -> tuple[str, ...]:
        arms: list[str] = []
        if path in lexical_paths:
            arms.append("lexical")
        if tied:
            arms.append("recency")
        if path in vector_paths:
            arms.append("vector")
        return tuple(arms)

    hits = _hits(rows, limit, now, records, arms_of)
    if explain is not None:
        explain.update(_parts(hits, lexical, vector, blended=not seed and vector is not None))
    return hits


@dataclass(frozen=True, slots=True)
class HybridLexicalArm:
    """The hybrid's lexical arm, ranked ahead of the search it belongs to."""

    ranked: list[tuple[int, Candidate]]


def hybrid_lexical_arm(
    view: HeadView | IndexedView, query: str, *, limit: int, admit: Admit | None
) -> HybridLexicalArm:
    """The lexical arm :func:`search_head` ranks when it runs hybrid with vectors: BM25 over
    the query's stems, question words left out, the best ``max(LEXICAL_ARM_LIMIT, limit)``."""
    return HybridLexicalArm(_hybrid_lexical(_indexes_for(view, admit), query, admit, limit))


def _hybrid_lexical(
    indexes: Indexes, query: str, admit: Admit | None, limit: int
) -> list[tuple[int, Candidate]]:
    cap = max(LEXICAL_ARM_LIMIT, limit)
    return _lexical_arm(indexes, lexical_query_of(query), admit, cap, stemmed=True)


def _indexes_for(view: HeadView | IndexedView, admit: Admit | None) -> Indexes:
    indexes = indexes_of(view)
    return indexes.with_archived if _reaches_archived(admit) else indexes


def _parts(
    hits: list[SearchHit],
    lexical: list[tuple[int, Candidate]],
    vector: list[tuple[int, _Row]] | None,
    *,
    blended: bool,
) -> dict[str, dict[str, float]]:
    """Each hit's score split by arm, by the same arithmetic that fused it: the shares of
    :func:`_blended_rows` for the hybrid, the ``weight / (rank + k)`` terms of
    :func:`_fused_rows` otherwise."""
    wanted = {hit.path for hit in hits}
    parts: dict[str, dict[str, float]] = {path: {} for path in wanted}
    best_bm25 = lexical[0][1][0] if lexical else 0.0
    for rank, (score, _key, path, _record) in lexical:
        if path in wanted:
            share = (
                LEXICAL_SHARE * score / best_bm25 if blended else LEXICAL_WEIGHT / (rank + RRF_K)
            )
            parts[path]["lexical"] = share
    if vector:
        best, floor = vector[0][1][0], vector[-1][1][0]
        for rank, (cosine, _key, path) in vector:
            if path not in wanted:
                continue
            if not blended:
                parts[path]["vector"] = VECTOR_WEIGHT / (rank + RRF_K)
            elif best > floor and cosine > floor:
                parts[path]["vector"] = (1.0 - LEXICAL_SHARE) / (best - floor) * (cosine - floor)
    if blended:  # a thread's lift scales a hit's parts, so they still sum to its score
        for hit in hits:
            split = parts[hit.path]
            total = sum(split.values())
            if total > 0.0 and total != hit.score:
                parts[hit.path] = {arm: share * hit.score / total for arm, share in split.items()}
    return parts


def _reaches_archived(admit: Admit | None) -> bool:
    """Whether ``admit`` (a scope or its bound ``admit``) can admit an archived record."""
    owner = getattr(admit, "__self__", admit)
    return bool(getattr(owner, "reaches_archived", False))


def lexical_query_of(query: str) -> str:
    """The query the hybrid search's lexical arm scores: its tokens without
    :data:`QUESTION_WORDS` (the whole query when nothing else is left)."""
    tokens = tokenize(query)
    kept = [token for token in tokens if token not in QUESTION_WORDS]
    return " ".join(kept) if kept else query


def _through_run(ranked: list[tuple[int, Candidate]], limit: int) -> int:
    """How many of ``ranked`` the first ``limit`` hits can draw on: through the end of the run
    of equal ranks that holds the last place (the rest changes neither order nor ties)."""
    if limit <= 0:
        return 0
    end = limit
    total = len(ranked)
    if end >= total:
        return total
    last = ranked[end - 1][0]
    while end < total and ranked[end][0] == last:
        end += 1
    return end


def _lexical_arms(_path: str, tied: bool) -> tuple[str, ...]:
    return _LEXICAL_RECENCY if tied else _LEXICAL_ONLY


_LEXICAL_ONLY: Final = ("lexical",)
_LEXICAL_RECENCY: Final = ("lexical", "recency")


def _fused_rows(
    lexical: list[tuple[int, Candidate]],
    vector: list[tuple[str, int]] | None,
    records: PMap[str, MemoryRecord],
    admitted: bool,
) -> list[Candidate]:
    """Every fused path as ``(fused score, utf16 key, path, record or None)``, fused score
    descending then path. A path with no record is dropped (memhtml's rule); a path the lexical
    arm admitted has one, so it is not looked up here (``admitted``)."""
    fused: dict[str, float] = {}
    present: dict[str, tuple[str, MemoryRecord | None]] = {}
    for rank, (_score, key, path, record) in lexical:
        fused[path] = fused.get(path, 0.0) + LEXICAL_WEIGHT / (rank + RRF_K)
        if admitted:
            present[path] = (key, record)
    for path, rank in vector or ():
        fused[path] = fused.get(path, 0.0) + VECTOR_WEIGHT / (rank + RRF_K)
    return _sorted_rows(fused, present, records.get)


def _sorted_rows(
    fused: dict[str, float],
    present: dict[str, tuple[str, MemoryRecord | None]],
    get: Callable[[str], MemoryRecord | None],
) -> list[Candidate]:
    """``fused`` (path -> score) as rows, score descending then path; a path with no record
    (``get`` answers None), and a score of 0 or less, dropped. ``present`` holds the rows the
    lexical arm admitted."""
    rows: list[Candidate] = []
    for path, score in fused.items():
        if score <= 0.0:
            continue
        known = present.get(path)
        if known is not None:
            rows.append((score, known[0], path, known[1]))
            continue
        record = get(path)
        if record is not None:
            rows.append((score, utf16_key(path), path, record))
    rows.sort(key=_key_of)
    rows.sort(key=_score_of, reverse=True)
    return rows


def _blended_rows(
    lexical: list[tuple[int, Candidate]],
    vector: list[tuple[int, _Row]],
    records: PMap[str, MemoryRecord],
    admitted: bool,
    query: str,
) -> list[Candidate]:
    """The hybrid fusion: every path of either arm scored
    ``LEXICAL_SHARE * bm25 / best bm25 + (1 - LEXICAL_SHARE) * (cosine - floor) / (best - floor)``,
    where ``floor`` is the cosine of the vector arm's last kept row (so that row, and a path the
    arm did not keep, gets nothing from it) and a path the lexical arm did not keep gets nothing
    from that one. Both shares are bounded by the arm's own best, so neither arm can outvote the
    other by its scale; cosines that do not tell records apart (``best == floor``) add nothing,
    which leaves the lexical order as it is. Then each turn of a conversation moves toward the
    best score of its thread (:func:`headd.head.threads.lift_threads`), and a question asking
    when favours the candidates that tell a time (:func:`headd.head.temporal.favour_times`).
    Paths scoring 0 are dropped; so is a path with no record (as in :func:`_fused_rows`)."""
    fused: dict[str, float] = {}
    present: dict[str, tuple[str, MemoryRecord | None]] = {}
    best_bm25 = lexical[0][1][0] if lexical else 0.0
    for _rank, (score, key, path, record) in lexical:
        fused[path] = LEXICAL_SHARE * score / best_bm25
        if admitted:
            present[path] = (key, record)
    if vector:
        best, floor = vector[0][1][0], vector[-1][1][0]
        if best > floor:
            vector_share = (1.0 - LEXICAL_SHARE) / (best - floor)
            for _rank, (cosine, _key, path) in vector:
                if cosine > floor:
                    fused[path] = fused.get(path, 0.0) + vector_share * (cosine - floor)

    # Each candidate's record looked up once (a persistent map's lookup is about a microsecond of
    # Python), for the threads, the questions about time and the rows.
    held: dict[str, MemoryRecord | None] = {}
    for path in fused:
        known = present.get(path)
        held[path] = known[1] if known is not None and known[1] is not None else records.get(path)

    def record_of(path: str) -> MemoryRecord | None:
        return held[path] if path in held else records.get(path)

    return _sorted_rows(
        favour_times(query, lift_threads(fused, held.get), held.get), present, record_of
    )


def _hits(
    rows: list[Candidate],
    limit: int,
    now: str | None,
    records: PMap[str, MemoryRecord],
    arms_of: Callable[[str, bool], tuple[str, ...]],
) -> list[SearchHit]:
    """The first ``limit`` of ``rows`` (fused score descending, then path) as hits, each run of
    equal fused scores reordered newest first (stable, so path still breaks its ties) and marked
    ``recency``. Runs that start past the limit change nothing returned, so they are skipped;
    records are fetched only for the hits and for the recency of a tie."""
    hits: list[SearchHit] = []
    limit = max(0, limit)
    total = len(rows)
    start = 0
    while start < total and len(hits) < limit:
        score = rows[start][0]
        end = start + 1
        while end < total and rows[end][0] == score:
            end += 1
        tied = end - start > 1
        run = rows[start:end]
        if tied:
            run.sort(key=lambda row: _recency_key(row[3] or records[row[2]], now), reverse=True)
        for fused, _key, path, held in run[: limit - len(hits)]:
            record = held or records[path]
            hits.append(SearchHit(path, fused, record.claim, record.title, arms_of(path, tied)))
        start = end
    return hits
