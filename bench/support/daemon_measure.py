"""Pure helpers of the daemon benchmark: percentiles, targets and the pass/fail verdicts.

Kept apart from the I/O (``bench.daemon_bench``) so the arithmetic that decides "pass" is tested
on its own (``tests/test_bench_daemon_measure.py``).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1) of a non-empty sample."""
    if not values:
        raise ValueError("percentile of an empty sample")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values_ms: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values_ms),
        "p50": round(percentile(values_ms, 0.50), 3),
        "p99": round(percentile(values_ms, 0.99), 3),
        "mean": round(statistics.fmean(values_ms), 3),
        "max": round(max(values_ms), 3),
    }


@dataclass(frozen=True)
class Target:
    """One figure's bound: ``at_most`` (latencies) or ``at_least`` (throughput, speed-up)."""

    name: str
    unit: str
    bound: float
    at_most: bool

    def judge(self, value: float | None) -> dict[str, Any]:
        if value is None:
            return {"value": None, "unit": self.unit, "target": self.text(), "pass": None}
        ok = value <= self.bound if self.at_most else value >= self.bound
        return {"value": round(value, 3), "unit": self.unit, "target": self.text(), "pass": ok}

    def text(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.bound:g} {self.unit}"


TARGETS = (
    Target("search_p50_1_client", "ms", 3, True),
    Target("searches_per_s_16_clients", "searches/s", 1000, False),
    Target("session_commit_ms", "ms", 50, True),
    Target("pickup_ms", "ms", 100, True),
    Target("speedup_vs_memhtml_mcp_search_p50", "x", 20, False),
    Target("index_rebuild_speedup_vs_memhtml", "x", 3, False),
    Target("index_update_ms", "ms", 50, True),
)


def ratio(slow: float | None, fast: float | None) -> float | None:
    """How many times ``fast`` is faster than ``slow`` (None when either is missing)."""
    if slow is None or fast is None or fast <= 0:
        return None
    return slow / fast


def verdicts(figures: Mapping[str, float | None]) -> dict[str, dict[str, Any]]:
    """Every target judged against its figure (a missing figure is ``pass: null``)."""
    return {t.name: t.judge(figures.get(t.name)) for t in TARGETS}
