"""The head benchmark's own code: its statistics, its git commits, and one small end-to-end run.

The bench is what says whether the head meets its targets (docs/benchmarks.md, "The head"), so
its arithmetic (percentiles,
nDCG, pass/fail) and its commits (one file changed, refs untouched, archive moves as memhtml
makes them) are tested like any other code, on real git stores built by ``bench.support.stores``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.scifact import write_scifact

from bench.support.head_commits import (
    archive_commit,
    cached_store,
    commit_changes,
    edit_commit,
    near_duplicate_path,
    near_duplicates_commit,
    read_text,
)
from bench.support.head_measure import (
    Figure,
    latency_summary,
    mean_ndcg,
    ndcg_at_k,
    percentile,
    ratio,
    timed,
)
from bench.support.stores import (
    SCIFACT_ENV,
    scifact_docs,
    scifact_path,
    scifact_qrels,
    scifact_queries,
)

# -- statistics ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=60),
    st.floats(min_value=0.01, max_value=100),
)
def test_percentile_is_the_nearest_rank(values: list[float], q: float) -> None:
    value = percentile(values, q)
    need = math.ceil(q / 100 * len(values))
    assert value in values
    assert sum(v <= value for v in values) >= need
    assert sum(v < value for v in values) < need


def test_percentile_examples() -> None:
    samples = [float(i) for i in range(1, 101)]
    assert percentile(samples, 50) == 50.0
    assert percentile(samples, 99) == 99.0
    assert percentile(samples, 100) == 100.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_latency_summary_is_in_milliseconds() -> None:
    summary = latency_summary([0.001, 0.002, 0.003, 0.004])
    assert summary["p50_ms"] == pytest.approx(2.0)
    assert summary["p99_ms"] == pytest.approx(4.0)
    assert summary["mean_ms"] == pytest.approx(2.5)


def test_ndcg_examples() -> None:
    assert ndcg_at_k(["a", "b"], {"a"}) == 1.0
    assert ndcg_at_k(["x", "a"], {"a"}) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["x", "y"], {"a"}) == 0.0
    assert ndcg_at_k(["a"], set()) == 0.0
    # two relevant, one found at rank 1: DCG 1 over ideal 1 + 1/log2(3)
    assert ndcg_at_k(["a", "x"], {"a", "b"}) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # only the top k counts
    assert ndcg_at_k(["x"] * 10 + ["a"], {"a"}) == 0.0
    assert mean_ndcg({"q1": ["a"]}, {"q1": {"a"}, "q2": {"b"}}) == 0.5


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
    st.sets(st.sampled_from("abcdefghij"), min_size=1),
)
def test_ndcg_is_between_zero_and_one(ranked: list[str], relevant: set[str]) -> None:
    score = ndcg_at_k(ranked, relevant)
    assert 0.0 <= score <= 1.0 + 1e-12
    ideal = sorted(relevant) + [d for d in ranked if d not in relevant]
    assert ndcg_at_k(ideal, relevant) == pytest.approx(1.0)


def test_figure_judges_at_most_targets() -> None:
    assert Figure("x", 1.0, "s", 1.0).passed is True
    assert Figure("x", 1.01, "s", 1.0).passed is False
    assert Figure("x", 1.0, "s").passed is None
    judged = Figure("x", 5.0, "ms", 4.0, cpu_value=3.0).as_json()
    assert judged["pass"] is False and judged["pass_on_cpu"] is True
    assert ratio(1.0, 4.0) == 0.25 and ratio(1.0, 0.0) is None


def test_timed_counts_the_cpu_of_children_it_waited_for() -> None:
    import subprocess
    import time

    own = time.process_time()
    _, took = timed(
        lambda: subprocess.run(
            [sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True
        )
    )
    assert took.cpu_s > 0.05
    assert time.process_time() - own < took.cpu_s


def test_timed_uses_the_clocks_it_is_given() -> None:
    ticks = iter([10.0, 12.5])
    cpu_ticks = iter([1.0, 1.25])
    result, took = timed(lambda: "done", wall=lambda: next(ticks), cpu=lambda: next(cpu_ticks))
    assert result == "done" and took.wall_s == 2.5 and took.cpu_s == 0.25


def test_gc_timer_counts_collections_inside_its_block() -> None:
    import gc

    from bench.head_bench import GcTimer

    with GcTimer() as timer:
        gc.collect()
    gc.collect()
    assert timer.counts[2] == 1 and timer.seconds[2] > 0
    assert timer.as_json()["collections_by_generation"][2] == 1


# -- commits ------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def scifact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """SciFact's files, generated (SciFact itself stays out of the repository)."""
    with pytest.MonkeyPatch.context() as patch:
        path = write_scifact(tmp_path_factory.mktemp("scifact"))
        patch.setenv(SCIFACT_ENV, str(path))
        yield path


@pytest.fixture(scope="module")
def small_store(
    scifact: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[pygit2.Repository, str, Path]:
    root = tmp_path_factory.mktemp("stores")
    repo, sha, built = cached_store(40, root)
    assert built
    return repo, sha, root


def _changed(repo: pygit2.Repository, old: str, new: str) -> set[str]:
    diff = repo[old].peel(pygit2.Commit).tree.diff_to_tree(repo[new].peel(pygit2.Commit).tree)
    return {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}


def test_cached_store_is_built_once(small_store: tuple[pygit2.Repository, str, Path]) -> None:
    repo, sha, root = small_store
    again, sha_again, built = cached_store(40, root)
    assert not built and sha_again == sha
    assert [p.name for p in root.iterdir()] == ["n40"]


def test_edit_commit_changes_one_file_and_moves_no_ref(
    small_store: tuple[pygit2.Repository, str, Path],
) -> None:
    repo, base, _ = small_store
    path = scifact_path(scifact_docs()[3][0])
    edited = edit_commit(repo, base, path, 7)
    assert _changed(repo, base, edited) == {path}
    assert "<p>Edited in revision 7.</p>" in read_text(repo, edited, path)
    assert str(repo.references["refs/heads/main"].target) == base
    assert [str(p) for p in repo[edited].peel(pygit2.Commit).parent_ids] == [base]


def test_commit_changes_drops_emptied_folders(
    small_store: tuple[pygit2.Repository, str, Path],
) -> None:
    repo, base, _ = small_store
    added = commit_changes(repo, base, {"areas/x/y/new.html": b"<p>x</p>"}, "add")
    assert _changed(repo, base, added) == {"areas/x/y/new.html"}
    removed = commit_changes(repo, added, {"areas/x/y/new.html": None}, "remove")
    assert repo[removed].peel(pygit2.Commit).tree.id == repo[base].peel(pygit2.Commit).tree.id


def test_archive_commit_moves_and_stamps(
    small_store: tuple[pygit2.Repository, str, Path],
) -> None:
    from datetime import UTC, datetime

    repo, base, _ = small_store
    originals = [scifact_path(doc_id) for doc_id, _, _ in scifact_docs()[:2]]
    with_dups = near_duplicates_commit(repo, base, originals)
    dups = [near_duplicate_path(p) for p in originals]
    assert _changed(repo, base, with_dups) == set(dups)
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    landed, moved = archive_commit(repo, with_dups, dups, now)
    assert moved == [f"archive/2026/{p}" for p in dups]
    assert _changed(repo, with_dups, landed) == set(dups) | set(moved)
    html = read_text(repo, landed, moved[0])
    assert '<meta name="memhtml-status" content="archived">' in html


# -- one small run, end to end ------------------------------------------------------------------


def test_bench_size_end_to_end(
    small_store: tuple[pygit2.Repository, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import head_bench

    _, _, root = small_store
    held = {doc_id for doc_id, _, _ in scifact_docs()[:40]}
    qrels = {qid: docs for qid, docs in scifact_qrels().items() if docs <= held}
    queries = [(qid, text) for qid, text in scifact_queries() if qid in qrels][:8]
    assert queries, "no train query is answered inside the first 40 abstracts"
    monkeypatch.setitem(head_bench.TARGETS, 40, {"load_s": 1e9, "advance_edit_p50_ms": 0.0})
    out = head_bench.bench_size(40, queries, qrels, retained=5, root=root)
    figures = {f["name"]: f for f in out["figures"]}
    assert set(figures) == {
        "load_s",
        "advance_edit_p50_ms",
        "advance_add_p50_ms",
        "search_lexical_p50_ms",
        "search_vectors_p50_ms",
        "gate_s",
        "bytes_per_record",
        "retained_100_extra_ratio",
    }
    assert figures["load_s"]["pass"] is True
    assert figures["advance_edit_p50_ms"]["pass"] is False
    assert figures["advance_edit_p50_ms"]["wall"]["n"] == 5
    assert out["records"] == 40 and out["skipped"] == 0
    assert out["gate"]["probes"] == 40 and out["gate"]["removed"] == 5
    assert out["memory"]["bytes_per_record"] > 1_000
    assert 0 < figures["retained_100_extra_ratio"]["value"] < 1
    assert out["vectors"]["vectors"] == 80  # an article and a title each
    # Relevant abstracts are in the store, so every lexical ranker finds some of them.
    quality = out["ndcg_at_10"]
    assert quality["queries"] == len(queries)
    for name in ("ours_lexical", "bm25s", "tantivy"):
        assert 0.3 < quality[name] <= 1.0, (name, quality)
    for peer in ("bm25s", "tantivy"):
        assert out["peers"][peer]["query"]["n"] == len(queries)
        assert out["peers"][peer]["ratios"]["our_search_p50_over_theirs"] > 0
    # the vector cache was kept on disk for the next run
    assert list(root.glob("n40.vectors.*.npz"))
