"""The one-time conversion to int8 matrix products: cached, atomic, and typed when it cannot run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from headd.embed import quantize
from headd.embed.factory import local_model_installed
from headd.embed.onnx_minilm import WEIGHTS_SHA256, OnnxEmbedder, installed_weights_path
from headd.errors import ModelUnavailable

needs_model = pytest.mark.skipif(not local_model_installed(), reason="the embed extra is absent")


def test_the_cache_directory_follows_the_environment(tmp_path: Path) -> None:
    assert quantize.model_cache_dir({"HEADD_MODEL_CACHE": str(tmp_path)}) == tmp_path
    assert quantize.model_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/headd/models")
    assert quantize.model_cache_dir({}) == Path.home() / ".cache" / "headd" / "models"


def test_the_daemons_cache_is_the_machines_so_two_stores_share_one_conversion(
    tmp_path: Path,
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    one = quantize.model_cache_for_store(tmp_path / "one", env)
    assert one == quantize.model_cache_for_store(tmp_path / "two", env)
    assert one == tmp_path / "cache" / "headd" / "models" and one.is_dir()
    pinned = {**env, "HEADD_MODEL_CACHE": str(tmp_path / "pinned")}
    assert quantize.model_cache_for_store(tmp_path / "one", pinned) == tmp_path / "pinned"
    (tmp_path / "blocked").write_text("a file where the cache would go", encoding="utf-8")
    sandboxed = {"XDG_CACHE_HOME": str(tmp_path / "blocked")}
    store = tmp_path / "one"
    assert quantize.model_cache_for_store(store, sandboxed) == store / ".memhtml/headd/models"


def test_the_cached_name_says_which_weights_and_which_runtime() -> None:
    name = quantize.quantized_name("ab" * 32, "1.32.0")
    assert name == "all-MiniLM-L6-v2-q8-fused-abababababababab-ort1.32.0.onnx"


@needs_model
def test_converted_once_then_read_from_the_cache(tmp_path: Path) -> None:
    source = installed_weights_path()
    first = quantize.quantized_weights(source, WEIGHTS_SHA256, tmp_path)
    assert first.parent == tmp_path and first.stat().st_size > 1_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.name]  # no scratch left over
    stamp = first.stat().st_mtime_ns
    assert quantize.quantized_weights(source, WEIGHTS_SHA256, tmp_path) == first
    assert first.stat().st_mtime_ns == stamp
    # An embedder on that cache uses the file as it is and embeds like the default one.
    embedder = OnnxEmbedder(model_cache=tmp_path)
    vector = embedder.embed(["The cat sat on the mat."])
    assert vector.shape == (1, 384) and np.isfinite(vector).all()
    assert first.stat().st_mtime_ns == stamp


@needs_model
def test_without_the_quantizer_it_is_model_unavailable_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)
    with pytest.raises(ModelUnavailable) as info:
        OnnxEmbedder(model_cache=tmp_path).embed(["a text"])
    assert "not installed" in info.value.details["reason"]
    assert not any(tmp_path.iterdir())


@needs_model
def test_a_failed_conversion_leaves_no_partial_file(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a graph" * 50)
    cache = tmp_path / "cache"
    with pytest.raises(ModelUnavailable) as info:
        quantize.quantized_weights(bad, "0" * 64, cache)
    assert "quantizing the model failed" in info.value.details["reason"]
    assert not any(cache.iterdir())


def test_an_unwritable_cache_falls_back_to_a_temp_directory(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x", encoding="utf-8")
    chosen = quantize._writable(blocked / "models")
    assert chosen != blocked / "models" and chosen.name.startswith("headd-models-")
    assert quantize._writable(tmp_path / "ok") == tmp_path / "ok"


#: Texts of several lengths: a one-word and a short query, a sentence, an abstract cut at 160.
FUSION_TEXTS = [
    "vitamin",
    "Does aspirin lower the risk of colon cancer?",
    "The cat sat on the mat while the dog slept by the door.",
    "Alterations of the architecture of cerebral white matter in the developing human brain "
    "can affect cortical development and result in functional disabilities. " * 12,
]


@needs_model
def test_the_fused_model_embeds_the_unfused_models_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx

    fused_path = quantize.quantized_weights(
        installed_weights_path(), WEIGHTS_SHA256, tmp_path / "f"
    )
    ops = [node.op_type for node in onnx.load(str(fused_path)).graph.node]
    assert ops.count("MultiHeadAttention") == 6 and ops.count("Gelu") == 6
    assert "Softmax" not in ops and "Erf" not in ops
    fused = OnnxEmbedder(model_cache=tmp_path / "f").embed(FUSION_TEXTS)
    monkeypatch.setattr(quantize, "_fuse", lambda _folded: None)
    quantize.quantized_weights(installed_weights_path(), WEIGHTS_SHA256, tmp_path / "u")
    unfused = OnnxEmbedder(model_cache=tmp_path / "u").embed(FUSION_TEXTS)
    cosines = (fused * unfused).sum(axis=1)
    assert cosines.min() >= 0.99995, cosines  # float rounding only: the same vector space
    assert np.abs(fused - unfused).max() < 2e-3


def test_a_graph_the_fusion_does_not_know_is_left_as_it_is() -> None:
    import onnx
    from onnx import TensorProto, helper

    from headd.embed.fuse import FusionMismatch, fuse_attention_and_gelu

    graph = helper.make_graph(
        [helper.make_node("Softmax", ["attention_mask_f"], ["y"], axis=-1)],
        "not-bert",
        [
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 4]),
            helper.make_tensor_value_info("attention_mask_f", TensorProto.FLOAT, [1, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(graph)
    before = model.SerializeToString()
    with pytest.raises(FusionMismatch):
        fuse_attention_and_gelu(model)
    assert model.SerializeToString() == before
    assert isinstance(onnx.load_from_string(before), onnx.ModelProto)
