"""search_head's quick paths answer exactly as the plain algorithm does.

The search scores with ``bm25_scores`` (one pass over the query's buckets), sorts only a window
of the best scores, remembers each scope's answers per version (``search_memo``), and fuses the
lexical arm alone without re-sorting. Each is checked here against a plain rendering of the rules
(every score sorted, every candidate admitted afresh, three stable sorts), on a corpus built for
ties: few words, so many equal BM25 scores; few times, so many equal recencies.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from support.memory import memory_html

from headd.head import search as search_module
from headd.head.ids import PATH_IDS, utf16_key
from headd.head.indexes import IndexedView, indexes_from_records, view_of
from headd.head.lexical import (
    BM25_B,
    BM25_K1,
    FloatArray,
    IdArray,
    LexicalIndex,
    bm25_scores,
    tokenize,
)
from headd.head.scope import Scope
from headd.head.search import (
    LEXICAL_ARM_LIMIT,
    LEXICAL_WEIGHT,
    RRF_K,
    SEARCH_MODES,
    SEED_EXACT,
    SearchHit,
    search_head,
)
from headd.head.search_memo import SearchMemos, memoizable_scope
from headd.head.version import parse_record
from headd.record import MemoryRecord

WORDS = ["basalt", "zircon", "quartz", "mica", "garnet", "olivine"]
TYPES = ["semantic", "episodic", "task", "procedural"]
TIMES = ["2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2027-06-01T00:00:00Z"]
NOW = "2026-12-01T00:00:00Z"
ACTIVE = '<meta name="memhtml-status" content="active">'


def _bm25_per_token(lexical: LexicalIndex, query: str) -> tuple[IdArray, FloatArray]:
    """BM25 a query token at a time, memhtml's loop as written: the reference for the one-pass
    ``bm25_scores``."""
    n_docs = lexical.doc_count
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    if n_docs == 0:
        return empty
    divisor = (lexical.total_length / n_docs) or 1.0
    scores = np.zeros(lexical.lengths.shape[0], dtype=np.float64)
    matched = np.zeros(lexical.lengths.shape[0], dtype=np.bool_)
    for token in dict.fromkeys(tokenize(query)):
        bucket = lexical.postings.get(token)
        if bucket is None:
            continue
        count = len(bucket)
        idf = math.log((n_docs - count + 0.5) / (count + 0.5) + 1)
        tf = bucket.tfs.astype(np.float64)  # a JavaScript number, as memhtml counts
        length = lexical.lengths[bucket.ids]
        normalized = (tf * (BM25_K1 + 1)) / (
            tf + BM25_K1 * ((1 - BM25_B) + (BM25_B * length) / divisor)
        )
        scores[bucket.ids] += idf * normalized
        matched[bucket.ids] = True
    if not matched.any():
        return empty
    ids = np.flatnonzero(matched).astype(np.int64)
    return ids, scores[ids]


def _corpus(count: int = 150) -> list[MemoryRecord]:
    rng = random.Random(11)
    records = []
    for index in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        html = memory_html(
            content_hash=True,
            title=f"Note {words[0]}",
            claim=f"{' '.join(words)}.",
            created=rng.choice(TIMES),
            memory_type=TYPES[index % len(TYPES)],
            tags=("rock",) if index % 3 == 0 else (),
        )
        if TYPES[index % len(TYPES)] == "task":
            html = html.replace(
                ACTIVE, ACTIVE + '\n<meta name="memhtml-task-status" content="todo">'
            )
        records.append(parse_record(f"areas/quick/n{rng.randint(0, 10**6):07d}-{index}.html", html))
    return records


@pytest.fixture(scope="module")
def view() -> IndexedView:
    return view_of(indexes_from_records(_corpus()), "0" * 40)


QUERIES = [
    "basalt",
    "zircon quartz",
    "mica garnet olivine basalt",
    "quartz quartz the zircon",
    "nothing-here",
    "",
    *(" ".join(pair) for pair in itertools.combinations(WORDS, 2)),
]
SCOPES = [
    None,
    Scope(),
    Scope(types=("task",)),
    Scope(types=("semantic", "task")),
    Scope(tags=("rock",)),
]


def _plain(
    view: IndexedView, query: str, limit: int, admit: Scope | None, cap: int = LEXICAL_ARM_LIMIT
) -> list[SearchHit]:
    """The rules with nothing skipped: the reference the quick paths must equal. ``cap``: the
    lexical arm's (40 in the seed-exact mode; the hybrid default's grows with the limit)."""
    indexes = view.indexes
    ids, scores = _bm25_per_token(indexes.lexical, query)
    scored = []
    for ident, score in zip(ids.tolist(), scores.tolist(), strict=True):
        record = indexes.records.get(PATH_IDS.path(ident))
        if admit is not None and (record is None or not admit(record)):
            continue
        scored.append((score, PATH_IDS.key(ident), PATH_IDS.path(ident)))
    scored.sort(key=lambda row: row[1])
    scored.sort(key=lambda row: row[0], reverse=True)
    lexical = []
    for index, (score, _key, path) in enumerate(scored[:cap]):
        if index == 0 or score != scored[index - 1][0]:
            rank = index + 1
        lexical.append((path, LEXICAL_WEIGHT / (rank + RRF_K)))
    rows = []
    for path, fused in lexical:
        record = indexes.records[path]
        at = record.event_at if record.event_at is not None else (record.updated_at or "")
        rows.append((fused, min(utf16_key(at), utf16_key(NOW)), utf16_key(path), record))
    rows.sort(key=lambda row: row[2])
    rows.sort(key=lambda row: row[1], reverse=True)
    rows.sort(key=lambda row: row[0], reverse=True)
    hits = []
    for index, (fused, _at, _key, record) in enumerate(rows[:limit]):
        tied = (index > 0 and rows[index - 1][0] == fused) or (
            index + 1 < len(rows) and rows[index + 1][0] == fused
        )
        arms = ("lexical", "recency") if tied else ("lexical",)
        hits.append(SearchHit(record.path, fused, record.claim, record.title, arms))
    return hits


def test_one_pass_bm25_gives_the_per_token_loop_to_the_last_bit(view: IndexedView) -> None:
    lexical = view.indexes.lexical
    for query in [*QUERIES, "basalt " * 30, "olivine mica"]:
        ids, scores = _bm25_per_token(lexical, query)
        quick_ids, quick_scores = bm25_scores(lexical, query)
        assert np.array_equal(ids, quick_ids)
        assert scores.tobytes() == quick_scores.tobytes()


@pytest.mark.parametrize("window", [search_module.LEXICAL_WINDOW, 1, 3, 7])
def test_every_path_answers_as_the_plain_rules(
    view: IndexedView, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "LEXICAL_WINDOW", window)
    monkeypatch.setattr(search_module, "SEARCH_MEMOS", SearchMemos())
    ties = 0
    for _pass in range(2):  # the first pass fills the memo, the second reads it
        for query, admit, limit, mode in itertools.product(
            QUERIES, SCOPES, (1, 3, 10, 200), SEARCH_MODES
        ):
            cap = LEXICAL_ARM_LIMIT if mode == SEED_EXACT else max(LEXICAL_ARM_LIMIT, limit)
            expected = _plain(view, query, limit, admit, cap)
            got = search_head(view, query, limit=limit, now=NOW, admit=admit, mode=mode)
            assert got == expected
            ties += sum("recency" in hit.arms for hit in expected)
    assert ties > 0  # the corpus does exercise the recency order


def test_a_bound_admit_and_an_equal_scope_share_the_memo(view: IndexedView) -> None:
    memos = SearchMemos()
    scope = memoizable_scope(Scope(types=("task",)).admit)
    assert scope == Scope(types=("task",))
    memo, answers = memos.of(view.indexes, 10, scope)
    answers[3] = 1
    again, same = memos.of(view.indexes, 10, Scope(types=("task",)))
    assert again is memo and same[3] == 1
    assert memoizable_scope(lambda record: True) is None


def test_an_unhashable_scope_is_not_memoized_but_still_searches(view: IndexedView) -> None:
    scope = Scope(tags=["rock"])  # type: ignore[arg-type]  # a list: the scope does not hash
    assert memoizable_scope(scope) is None
    assert search_head(view, "basalt", now=NOW, admit=scope) == _plain(
        view, "basalt", 10, Scope(tags=("rock",))
    )
