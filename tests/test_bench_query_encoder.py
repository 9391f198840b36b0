"""bench.query_encoder_bench's pure parts: the layer names it cuts the graph at, the sentences
it fits on, and the affine map it fits (the model itself is the bench's to run)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.query_encoder_bench import apply_map, fit_map, layer_output, sentences_of


def test_layer_outputs_name_each_layer_s_last_norm() -> None:
    assert layer_output(1) == "layer_norm_2"
    assert layer_output(3) == "layer_norm_6"
    assert layer_output(6) == "last_hidden_state"
    for bad in (0, 7):
        with pytest.raises(ValueError):
            layer_output(bad)


def test_sentences_keep_query_sized_ones() -> None:
    text = "Too short. This sentence has exactly enough words to count! Tiny? " + "word " * 50
    assert sentences_of(text) == ["This sentence has exactly enough words to count!"]


def test_the_fitted_map_recovers_an_affine_map() -> None:
    rng = np.random.default_rng(3)
    pooled = rng.normal(size=(400, 8)).astype(np.float32)
    weights, bias = rng.normal(size=(8, 5)), rng.normal(size=5)
    target = pooled @ weights + bias
    target = (target / np.linalg.norm(target, axis=1, keepdims=True)).astype(np.float32)
    mapping = fit_map(pooled, target, ridge=0.0)
    mapped = apply_map(pooled, mapping)
    assert mapped.shape == (400, 5)
    assert np.allclose(np.linalg.norm(mapped, axis=1), 1.0, atol=1e-5)
    assert float(np.mean(np.sum(mapped * target, axis=1))) > 0.9
