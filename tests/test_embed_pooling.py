"""Masked mean pooling and L2 normalization: padding never counts, rows come out unit length."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from headd.embed.pooling import l2_normalize, masked_mean

finite = st.floats(-100, 100, allow_nan=False, width=32)


@settings(max_examples=40, deadline=None)
@given(
    real=hnp.arrays(
        np.float32, st.tuples(st.integers(1, 3), st.integers(1, 6), st.just(4)), elements=finite
    ),
    pad=st.integers(1, 4),
    junk=finite,
)
def test_padding_does_not_change_the_mean(real: np.ndarray, pad: int, junk: float) -> None:
    b, t, d = real.shape
    mask = np.ones((b, t), dtype=np.int64)
    padded = np.concatenate([real, np.full((b, pad, d), junk, dtype=np.float32)], axis=1)
    padded_mask = np.concatenate([mask, np.zeros((b, pad), dtype=np.int64)], axis=1)
    np.testing.assert_allclose(
        masked_mean(padded, padded_mask), real.mean(axis=1), rtol=1e-5, atol=1e-4
    )


def test_mean_counts_only_masked_tokens() -> None:
    hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    np.testing.assert_allclose(masked_mean(hidden, mask), [[2.0, 3.0]])


def test_shape_mismatch_is_refused() -> None:
    with pytest.raises(ValueError):
        masked_mean(np.zeros((2, 3, 4), dtype=np.float32), np.ones((2, 4)))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(1, 8)), elements=finite))
def test_rows_are_unit_or_zero(vectors: np.ndarray) -> None:
    out = l2_normalize(vectors)
    assert out.dtype == np.float32
    norms = np.linalg.norm(out.astype(np.float64), axis=1)
    for row, norm in zip(vectors, norms, strict=True):
        if np.linalg.norm(row.astype(np.float64)) > 1e-6:
            assert abs(norm - 1.0) < 1e-5
        else:
            assert norm <= 1.0 + 1e-5
