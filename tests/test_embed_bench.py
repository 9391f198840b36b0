"""The measuring tools of bench/embed_bench.py: nDCG, recall, fusion and top-k."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.embed_bench import ndcg_at_k, recall_at_k, rrf_fuse, top_k


def test_ndcg_is_one_for_a_perfect_ranking_and_zero_for_a_miss() -> None:
    assert ndcg_at_k(["a", "b", "x"], {"a", "b"}) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], {"a"}) == 0.0
    assert ndcg_at_k(["a"], set()) == 0.0


def test_ndcg_discounts_by_log_rank() -> None:
    # One relevant document at rank 2: 1/log2(3) over an ideal of 1.
    assert ndcg_at_k(["x", "a"], {"a"}) == pytest.approx(1 / math.log2(3))
    # Two relevant, found at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2(3)).
    expected = (1 + 1 / 2) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}) == pytest.approx(expected)
    # Only the first k count.
    assert ndcg_at_k(["x"] * 10 + ["a"], {"a"}, k=10) == 0.0


def test_recall_counts_the_share_found() -> None:
    assert recall_at_k(["a", "x", "b"], {"a", "b", "c", "d"}, 2) == 0.25


def test_rrf_rewards_agreement_between_arms() -> None:
    fused = rrf_fuse([["a", "b", "x"], ["y", "b", "z"]])
    assert fused[0] == "b"  # 2nd in both arms (2/62) beats 1st in one arm only (1/61)
    assert fused[1:3] == ["a", "y"]  # equal shares fall back to the id
    assert set(fused) == {"a", "b", "x", "y", "z"}


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.integers(1, 12), st.integers(0, 2**31))
def test_top_k_matches_a_full_sort(rows: int, cols: int, k: int, seed: int) -> None:
    scores = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    expected = np.argsort(-scores, axis=1, kind="stable")[:, : min(k, cols)]
    got = top_k(scores, k)
    np.testing.assert_array_equal(
        np.take_along_axis(scores, got, axis=1), np.take_along_axis(scores, expected, axis=1)
    )
