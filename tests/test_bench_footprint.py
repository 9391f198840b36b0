"""The footprint bench's arithmetic: sizes under ``.memhtml/headd/`` and the goals it judges."""

from __future__ import annotations

from pathlib import Path

from bench.footprint_bench import judge, state_sizes


def test_state_sizes_count_every_file_and_the_newest_snapshot_per_memory(tmp_path: Path) -> None:
    root = tmp_path / ".memhtml" / "headd"
    (root / "snapshots").mkdir(parents=True)
    (root / "snapshots" / f"{'a' * 40}.snap").write_bytes(b"x" * 2048)
    (root / "index.db").write_bytes(b"y" * 4096)
    sizes = state_sizes(tmp_path, 2)
    assert sizes["total_bytes"] == 6144 and sizes["snapshots"] == 1
    assert sizes["state_kb_per_memory"] == 3.0 and sizes["snapshot_kb_per_memory"] == 1.0
    assert sizes["entries_bytes"] == {"snapshots": 2048, "index.db": 4096}


def warm_figures(rss: float, peak_at_commits: float, peak: float) -> dict:
    """A warm start's figures as ``warm_start`` reports them (READY 0.4 s, search p50 1 ms)."""
    return {
        "after_commits": {"VmRSS": rss, "VmHWM": peak_at_commits},
        "after_snapshot_write": {"VmRSS": rss, "VmHWM": peak},
        "ready_s": 0.4,
        "search_ms": {"p50": 1.0},
    }


def test_the_goals_at_10000_pass_and_fail_on_their_bounds() -> None:
    warm = warm_figures(150.0, 240.0, 251.0)
    disk = {"state_kb_per_memory": 6.0, "snapshot_kb_per_memory": 2.1}
    goals = judge(10_000, warm, disk)
    assert goals["rss_mb_after_commits"]["pass"] and goals["state_kb_per_memory"]["pass"]
    # The peak counts the snapshot write after the commits.
    assert not goals["hwm_mb"]["pass"] and goals["hwm_mb"]["value"] == 251.0
    assert not goals["snapshot_kb_per_memory"]["pass"]
    assert goals["warm_ready_s"]["pass"] and "search_p50_ms" not in goals
    assert judge(100_000, warm, disk)["search_p50_ms"]["pass"]


def test_ready_is_judged_on_the_median_of_the_repeated_starts() -> None:
    warm = warm_figures(100.0, 100.0, 100.0)
    disk = {"state_kb_per_memory": 1.0, "snapshot_kb_per_memory": 1.0}
    ready = {"runs": [], "median": {"ready_s": 0.6}}
    assert judge(10_000, warm, disk)["warm_ready_s"]["pass"]
    judged = judge(10_000, warm, disk, ready)["warm_ready_s"]
    assert judged["value"] == 0.6 and not judged["pass"]


def test_the_resident_goal_is_judged_after_a_load_from_git_too() -> None:
    disk = {"state_kb_per_memory": 1.0, "snapshot_kb_per_memory": 1.0}
    warm = warm_figures(133.4, 140.0, 170.0)
    cold = warm_figures(150.2, 190.0, 190.0)
    goals = judge(10_000, warm, disk, None, cold)
    assert goals["rss_mb_after_commits"]["pass"]
    assert goals["cold_rss_mb_after_commits"] == {
        **goals["cold_rss_mb_after_commits"],
        "value": 150.2,
    }
    assert not goals["cold_rss_mb_after_commits"]["pass"]
    # Without a cold run the warm figure stands for both.
    assert judge(10_000, warm, disk)["cold_rss_mb_after_commits"]["value"] == 133.4
