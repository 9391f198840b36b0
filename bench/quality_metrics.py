"""Retrieval metrics for ``bench.quality_bench``: binary-relevance recall and nDCG, per category.

Pure functions over ranked ids and relevant sets, so the bench's figures can be checked on tiny
synthetic data (``tests/test_bench_quality.py``) without any data set.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Share of ``relevant`` in the first ``k`` of ``ranked`` (0 when nothing is relevant)."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Binary nDCG@k: gain ``1 / log2(rank + 1)``; the ideal ranks every relevant id first."""
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal


#: A metric's name -> (kind, k).
def metric_names(recall_ks: Iterable[int], ndcg_k: int = 10) -> list[str]:
    return [f"R@{k}" for k in recall_ks] + [f"nDCG@{ndcg_k}"]


def query_scores(
    ranked: Sequence[str], relevant: set[str], names: Sequence[str]
) -> dict[str, float]:
    """Every metric of ``names`` (``R@k``, ``nDCG@k``) for one query."""
    out: dict[str, float] = {}
    for name in names:
        kind, _, k = name.partition("@")
        out[name] = (recall_at if kind == "R" else ndcg_at)(ranked, relevant, int(k))
    return out


def summarize(
    per_query: Sequence[Mapping[str, float]],
    categories: Sequence[str],
    names: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Means over every query (``all``) and per category, each with its query count ``n``."""
    groups: dict[str, list[Mapping[str, float]]] = {"all": list(per_query)}
    for scores, category in zip(per_query, categories, strict=True):
        if category != "all":  # a data set without categories names every query "all"
            groups.setdefault(category, []).append(scores)
    out: dict[str, dict[str, float]] = {}
    for group in ["all", *sorted(g for g in groups if g != "all")]:
        rows = groups[group]
        summary: dict[str, float] = {"n": len(rows)}
        for name in names:
            summary[name] = round(statistics.fmean(r[name] for r in rows), 4) if rows else 0.0
        out[group] = summary
    return out
