"""bench/sleep_bench on a small store: the document's shape, and that its corpus gives every
deterministic phase something to do (so the timing measures the phases, not an empty pass)."""

from __future__ import annotations

from bench import sleep_bench


def test_the_bench_measures_a_run_that_changes_something() -> None:
    figure = sleep_bench.measure(200)
    assert figure["memories"] == 200
    assert figure["run"]["wall_s"] > 0 and figure["search_idle"]["n"] == 200
    assert set(figure["phases"]) >= {
        "dedup-merge",
        "retention-triage",
        "reprieve",
        "placement-triage",
    }
    assert figure["search_ratio_p50"] is not None
