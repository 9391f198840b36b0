"""The dense arm's product split over two cores gives the single product's bits.

Seen red: with the halves joined in the wrong order, with the helper's half summed in float64,
and with the split taken on a single usable core.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.head import row_products as rp


@pytest.fixture
def fresh_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper started for this test alone, so a patched core count decides anew."""
    monkeypatch.setattr(rp, "_helper", None)
    monkeypatch.setattr(rp, "_decided", False)


def _scans_by_thread(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record each einsum scan's thread and row count."""
    seen: list[tuple[str, int]] = []
    scan = rp._scan

    def recording(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
        seen.append((threading.current_thread().name, matrix.shape[0]))
        return scan(matrix, query)

    monkeypatch.setattr(rp, "_scan", recording)
    return seen


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 400), seed=st.integers(0, 2**32 - 1), split_rows=st.integers(1, 400))
def test_the_split_product_equals_the_single_one_to_the_bit(
    rows: int, seed: int, split_rows: int
) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    original = rp.SPLIT_ROWS
    rp.SPLIT_ROWS = split_rows
    try:
        split = rp.row_products(matrix, query)
    finally:
        rp.SPLIT_ROWS = original
    assert split.dtype == np.float32
    assert np.array_equal(split, np.einsum("ij,j->i", matrix, query))


def test_a_large_matrix_scans_half_on_the_helper_thread(
    monkeypatch: pytest.MonkeyPatch, fresh_helper: None
) -> None:
    monkeypatch.setattr(rp, "usable_cores", lambda: 2)
    seen = _scans_by_thread(monkeypatch)
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((10_001, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    products = rp.row_products(matrix[1:], query)  # a row slice, as the version matrix passes
    assert np.array_equal(products, np.einsum("ij,j->i", matrix[1:], query))
    caller = threading.current_thread().name
    assert sorted(rows for _, rows in seen) == [5_000, 5_000]
    names = sorted(name for name, _ in seen)
    assert names[0] == caller and names[1].startswith("headd-rows"), names


def test_a_small_matrix_or_a_single_core_scans_on_the_caller_alone(
    monkeypatch: pytest.MonkeyPatch, fresh_helper: None
) -> None:
    seen = _scans_by_thread(monkeypatch)
    rng = np.random.default_rng(8)
    query = rng.standard_normal(384).astype(np.float32)
    small = rng.standard_normal((rp.SPLIT_ROWS - 1, 384)).astype(np.float32)
    rp.row_products(small, query)
    monkeypatch.setattr(rp, "usable_cores", lambda: 1)
    large = rng.standard_normal((rp.SPLIT_ROWS * 2, 384)).astype(np.float32)
    assert np.array_equal(rp.row_products(large, query), np.einsum("ij,j->i", large, query))
    caller = threading.current_thread().name
    assert seen == [(caller, rp.SPLIT_ROWS - 1), (caller, rp.SPLIT_ROWS * 2)]
