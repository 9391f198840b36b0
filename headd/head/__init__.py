"""The head: the corpus as a value (seed 001).

One immutable :class:`HeadVersion` per commit, advanced by the paths two commits differ on,
overlaid with a session's pending ops, searched by reciprocal-rank fusion over a BM25 arm and an
optional cosine arm, and compared by the head gate. Everything here is pure except the git reads
in ``version.py`` and the vector cache file in ``vectors.py``.

Every name below is imported from its module at first use (PEP 562), so importing one part of
the head (``headd.head.ids``, ``headd.head.snapshot``) does not load the gate, search and
overlay on a daemon's way to READY.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from headd.head.gate import (
        HEAD_GATE_K,
        HEAD_GATE_PROBES,
        HEAD_GATE_SEED,
        HEAD_GATE_TOLERANCE,
        FellOut,
        HeadGateInversion,
        HeadGateProbe,
        HeadGateReport,
        HeadGateResult,
        SupersededOutranks,
        describe_head_gate_failure,
        gate_heads,
        head_gate_failed,
        probe_query_for,
        probes_for,
        score_probes,
    )
    from headd.head.indexes import (
        EMPTY_INDEXES,
        HeadView,
        IndexedView,
        Indexes,
        IndexesBuilder,
        indexes_from_records,
        indexes_of,
        insert_record,
        remove_record,
        view_of,
    )
    from headd.head.lexical import STOP_WORDS, LexicalIndex, bm25_scores, tokenize
    from headd.head.overlay import with_overlay
    from headd.head.scope import Scope, parse_facet_filter, parse_facet_filters
    from headd.head.search import (
        DEFAULT_LIMIT,
        LEXICAL_ARM_LIMIT,
        LEXICAL_WEIGHT,
        RRF_K,
        VECTOR_ARM_LIMIT,
        VECTOR_WEIGHT,
        HeadVectors,
        SearchHit,
        search_head,
    )
    from headd.head.vectors import (
        VECTOR_TEXT_MAX_CHARS,
        FillCounts,
        FillResult,
        VectorCache,
        VectorSpace,
        fill_vectors,
        vector_text_of,
    )
    from headd.head.version import (
        HeadVersion,
        SkippedFile,
        advance_head,
        is_candidate_path,
        load_head,
        parse_record,
        version_from_records,
    )

__all__ = [
    "DEFAULT_LIMIT",
    "EMPTY_INDEXES",
    "HEAD_GATE_K",
    "HEAD_GATE_PROBES",
    "HEAD_GATE_SEED",
    "HEAD_GATE_TOLERANCE",
    "LEXICAL_ARM_LIMIT",
    "LEXICAL_WEIGHT",
    "RRF_K",
    "STOP_WORDS",
    "VECTOR_ARM_LIMIT",
    "VECTOR_TEXT_MAX_CHARS",
    "VECTOR_WEIGHT",
    "FellOut",
    "FillCounts",
    "FillResult",
    "HeadGateInversion",
    "HeadGateProbe",
    "HeadGateReport",
    "HeadGateResult",
    "HeadVectors",
    "HeadVersion",
    "HeadView",
    "IndexedView",
    "Indexes",
    "IndexesBuilder",
    "LexicalIndex",
    "Scope",
    "SearchHit",
    "SkippedFile",
    "SupersededOutranks",
    "VectorCache",
    "VectorSpace",
    "advance_head",
    "bm25_scores",
    "describe_head_gate_failure",
    "fill_vectors",
    "gate_heads",
    "head_gate_failed",
    "indexes_from_records",
    "indexes_of",
    "insert_record",
    "is_candidate_path",
    "load_head",
    "parse_facet_filter",
    "parse_facet_filters",
    "parse_record",
    "probe_query_for",
    "probes_for",
    "remove_record",
    "score_probes",
    "search_head",
    "tokenize",
    "vector_text_of",
    "version_from_records",
    "view_of",
    "with_overlay",
]

_LAZY: dict[str, str] = {
    "DEFAULT_LIMIT": "headd.head.search",
    "EMPTY_INDEXES": "headd.head.indexes",
    "FellOut": "headd.head.gate",
    "FillCounts": "headd.head.vectors",
    "FillResult": "headd.head.vectors",
    "HEAD_GATE_K": "headd.head.gate",
    "HEAD_GATE_PROBES": "headd.head.gate",
    "HEAD_GATE_SEED": "headd.head.gate",
    "HEAD_GATE_TOLERANCE": "headd.head.gate",
    "HeadGateInversion": "headd.head.gate",
    "HeadGateProbe": "headd.head.gate",
    "HeadGateReport": "headd.head.gate",
    "HeadGateResult": "headd.head.gate",
    "HeadVectors": "headd.head.search",
    "HeadVersion": "headd.head.version",
    "HeadView": "headd.head.indexes",
    "IndexedView": "headd.head.indexes",
    "Indexes": "headd.head.indexes",
    "IndexesBuilder": "headd.head.indexes",
    "LEXICAL_ARM_LIMIT": "headd.head.search",
    "LEXICAL_WEIGHT": "headd.head.search",
    "LexicalIndex": "headd.head.lexical",
    "RRF_K": "headd.head.search",
    "STOP_WORDS": "headd.head.lexical",
    "Scope": "headd.head.scope",
    "SearchHit": "headd.head.search",
    "SkippedFile": "headd.head.version",
    "SupersededOutranks": "headd.head.gate",
    "VECTOR_ARM_LIMIT": "headd.head.search",
    "VECTOR_TEXT_MAX_CHARS": "headd.head.vectors",
    "VECTOR_WEIGHT": "headd.head.search",
    "VectorCache": "headd.head.vectors",
    "VectorSpace": "headd.head.vectors",
    "advance_head": "headd.head.version",
    "bm25_scores": "headd.head.lexical",
    "describe_head_gate_failure": "headd.head.gate",
    "fill_vectors": "headd.head.vectors",
    "gate_heads": "headd.head.gate",
    "head_gate_failed": "headd.head.gate",
    "indexes_from_records": "headd.head.indexes",
    "indexes_of": "headd.head.indexes",
    "insert_record": "headd.head.indexes",
    "is_candidate_path": "headd.head.version",
    "load_head": "headd.head.version",
    "parse_facet_filter": "headd.head.scope",
    "parse_facet_filters": "headd.head.scope",
    "parse_record": "headd.head.version",
    "probe_query_for": "headd.head.gate",
    "probes_for": "headd.head.gate",
    "remove_record": "headd.head.indexes",
    "score_probes": "headd.head.gate",
    "search_head": "headd.head.search",
    "tokenize": "headd.head.lexical",
    "vector_text_of": "headd.head.vectors",
    "version_from_records": "headd.head.version",
    "view_of": "headd.head.indexes",
    "with_overlay": "headd.head.overlay",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
