"""How much of a query a memory answers: the absolute relevance a search score does not give.

A search ranks: its scores are relative (the hybrid fusion divides by the best score, the seed's
reciprocal ranks ignore the scores altogether), so the best hit of a prompt about haiku in a
store about databases still scores high. Something that injects memories unasked, the prompt
hook, needs to know whether a hit bears on the prompt at all. Its measure is the query's
*coverage* by the memory: the query's words (stop and question words left out, each counted once
by its stem), each weighted by its BM25 idf over the version, and the share of that weight whose
words the memory's indexed text holds in some form. A word the store never saw weighs the most
and is matched by nothing, so a prompt about something the store does not know covers little.

Pure, over one version's active lexical index; docs/design/mcp.md gives the floor the hook uses
and the LoCoMo figures that chose it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np

from headd.head.ids import PATH_IDS
from headd.head.indexes import HeadView, IndexedView, Indexes, indexes_of
from headd.head.search import SearchHit, lexical_query_of
from headd.head.stems import stem, stem_groups
from headd.head.tokens import tokenize

#: The fewest content words a query needs before anything is relevant to it: "ok", "continue" or
#: "thanks" carry one or none, and no memory answers them.
MIN_WORDS: Final = 2


def query_words(query: str) -> list[str]:
    """The query's content words, one per stem, in first-occurrence order."""
    seen: set[str] = set()
    words = []
    for token in dict.fromkeys(tokenize(lexical_query_of(query))):
        root = stem(token)
        if root not in seen:
            seen.add(root)
            words.append(token)
    return words


def coverage(indexes: Indexes, query: str, paths: Sequence[str]) -> list[float]:
    """Each of ``paths``' coverage of ``query`` in [0, 1] (0 for a query with no content word
    and for a path the lexical index does not hold)."""
    lexical = indexes.lexical
    postings = lexical.postings
    total = lexical.doc_count
    idents = np.array([PATH_IDS.intern(p) for p in paths], dtype=np.int64)
    matched = np.zeros(len(paths), dtype=np.float64)
    weight = 0.0
    for word in query_words(query):
        groups = stem_groups(postings, word)
        buckets = [postings[form] for form in groups[0]] if groups else []
        held = np.unique(np.concatenate([b.ids for b in buckets])) if buckets else None
        frequency = 0 if held is None else int(held.shape[0])
        idf = math.log((total - frequency + 0.5) / (frequency + 0.5) + 1)
        weight += idf
        if held is not None and idents.shape[0]:
            at = np.searchsorted(held, idents).clip(max=held.shape[0] - 1)
            matched += idf * (held[at] == idents)
    if weight == 0.0:
        return [0.0] * len(paths)
    return [float(v) for v in matched / weight]


def relevant_hits(
    view: HeadView | IndexedView, query: str, hits: Sequence[SearchHit], floor: float
) -> tuple[list[SearchHit], list[float]]:
    """The ``hits`` covering at least ``floor`` of ``query``, in order, and their coverage;
    none for a query of fewer than :data:`MIN_WORDS` content words."""
    if len(query_words(query)) < MIN_WORDS:
        return [], []
    shares = coverage(indexes_of(view), query, [hit.path for hit in hits])
    kept = [(hit, share) for hit, share in zip(hits, shares, strict=True) if share >= floor]
    return [hit for hit, _ in kept], [share for _, share in kept]
