"""``bench.support.daemon_measure``: the percentile, ratio and target arithmetic that decides pass/fail."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.support.daemon_measure import TARGETS, percentile, ratio, summary, verdicts


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 0.5) == 51.0  # round(0.5 * 99) = 50 -> the 51st value
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 0.0) == 1.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        percentile([], 0.5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=50), st.floats(0, 1))
def test_percentile_is_a_member_between_min_and_max(values: list[float], q: float) -> None:
    p = percentile(values, q)
    assert p in values
    assert min(values) <= p <= max(values)
    assert percentile(values, 0.5) <= percentile(values, 0.99)


def test_summary_fields() -> None:
    s = summary([1.0, 2.0, 3.0, 10.0])
    assert s == {"n": 4, "p50": 3.0, "p99": 10.0, "mean": 4.0, "max": 10.0}


def test_ratio_is_how_many_times_faster() -> None:
    assert ratio(40.0, 2.0) == 20.0
    assert ratio(None, 2.0) is None
    assert ratio(40.0, None) is None
    assert ratio(40.0, 0.0) is None


def test_latency_targets_pass_at_or_under_the_bound() -> None:
    got = verdicts({"search_p50_1_client": 3.0, "session_commit_ms": 50.01, "pickup_ms": 12})
    assert got["search_p50_1_client"]["pass"] is True
    assert got["session_commit_ms"]["pass"] is False
    assert got["pickup_ms"]["pass"] is True
    assert got["pickup_ms"]["target"] == "<= 100 ms"


def test_throughput_and_speedup_targets_pass_at_or_over_the_bound() -> None:
    got = verdicts(
        {
            "searches_per_s_16_clients": 999.9,
            "speedup_vs_memhtml_mcp_search_p50": 20.0,
            "index_rebuild_speedup_vs_memhtml": 2.99,
        }
    )
    assert got["searches_per_s_16_clients"]["pass"] is False
    assert got["speedup_vs_memhtml_mcp_search_p50"]["pass"] is True
    assert got["index_rebuild_speedup_vs_memhtml"]["pass"] is False


def test_every_target_is_judged_and_a_missing_figure_is_null() -> None:
    got = verdicts({})
    assert set(got) == {t.name for t in TARGETS}
    assert all(v["pass"] is None and v["value"] is None for v in got.values())
