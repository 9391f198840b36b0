"""Pure helpers of the head benchmark: timings, percentiles, nDCG, targets and ratios.

Nothing here touches git, the clock of the machine or the head; the timers take the clock
functions as arguments so a test can drive them. Every figure of the bench becomes a
:class:`Figure`, so the JSON carries the value beside its target and its pass/fail in one shape.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
Clock = Callable[[], float]


@dataclass(frozen=True)
class Timed:
    """Wall and CPU seconds of one call. On a shared machine the CPU figure is the steadier one:
    wall time includes the time other processes held the two cores."""

    wall_s: float
    cpu_s: float


def process_tree_cpu() -> float:
    """CPU seconds of this process plus its finished children: ``load_head`` may parse on a
    process pool, whose workers' time ``time.process_time`` alone would leave out."""
    import time

    times = os.times()
    return time.process_time() + times.children_user + times.children_system


def timed(
    fn: Callable[[], T], *, wall: Clock | None = None, cpu: Clock | None = None
) -> tuple[T, Timed]:
    """Call ``fn`` once; its result and how long it took (wall, and CPU of this process and of
    the children it waited for)."""
    import time

    wall_clock = wall or time.perf_counter
    cpu_clock = cpu or process_tree_cpu
    w0, c0 = wall_clock(), cpu_clock()
    result = fn()
    return result, Timed(wall_clock() - w0, cpu_clock() - c0)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100): the smallest value with at least q% at or below."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile out of range: {q}")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_summary(samples_s: Sequence[float]) -> dict[str, float]:
    """p50/p99/max/mean in milliseconds over per-call seconds."""
    ms = [s * 1000 for s in samples_s]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 50),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms),
        "mean_ms": sum(ms) / len(ms),
    }


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k: ``sum 1/log2(rank+1)`` over relevant hits in the top k, over the
    ideal ordering's sum. A query with no relevant document scores 0."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]) if doc in wanted)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(wanted))))
    return dcg / ideal


def mean_ndcg(
    runs: Mapping[str, Sequence[str]], qrels: Mapping[str, Iterable[str]], k: int = 10
) -> float:
    """Mean nDCG@k over the queries of ``qrels`` (a query with no run counts as 0)."""
    if not qrels:
        raise ValueError("no judged queries")
    total = sum(ndcg_at_k(runs.get(qid, ()), rel, k) for qid, rel in qrels.items())
    return total / len(qrels)


@dataclass(frozen=True)
class Figure:
    """One measured figure beside its target. ``at_most`` targets pass when value <= target."""

    name: str
    value: float
    unit: str
    target: float | None = None
    cpu_value: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool | None:
        return None if self.target is None else self.value <= self.target

    @property
    def passed_on_cpu(self) -> bool | None:
        if self.target is None or self.cpu_value is None:
            return None
        return self.cpu_value <= self.target

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "value": round(self.value, 4), "unit": self.unit}
        if self.cpu_value is not None:
            out["cpu_value"] = round(self.cpu_value, 4)
        if self.target is not None:
            out["target"] = self.target
            out["pass"] = self.passed
            if self.cpu_value is not None:
                out["pass_on_cpu"] = self.passed_on_cpu
        if self.note:
            out["note"] = self.note
        out.update(self.extra)
        return out


def ratio(ours: float, theirs: float) -> float | None:
    """``ours / theirs`` (below 1: we are faster or smaller), None when theirs is 0."""
    return None if theirs == 0 else round(ours / theirs, 3)


def load_average() -> list[float]:
    """The 1/5/15-minute load averages: two cores are shared, so every figure carries them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - platforms without getloadavg
        return []


def rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc/self/statm``), 0 where unavailable."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
