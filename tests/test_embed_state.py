"""``status.embedder_state``: which model answers and where its load stands, the one-time int8
conversion of a first use included."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from headd.embed.factory import embedder_state
from headd.embed.hashing import HashingEmbedder
from headd.errors import ModelUnavailable


def test_no_embedder_says_why() -> None:
    assert embedder_state(None, "auto").reason == "the embed extra is not installed"
    assert msgspec.to_builtins(embedder_state(None, "off")) == {
        "setting": "off",
        "model": None,
        "state": "off",
        "reason": "--embedder off",
    }


def test_the_hash_embedder_is_ready_at_once() -> None:
    state = embedder_state(HashingEmbedder(), "hash")
    assert state.state == "ready" and str(state.model).startswith("headd-hash")


@pytest.mark.parametrize("converted", [False, True])
def test_a_first_use_reports_the_conversion_and_a_failure_names_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converted: bool
) -> None:
    pytest.importorskip("onnxruntime")
    from headd.embed import onnx_minilm
    from headd.embed.quantize import converted_path

    embedder = onnx_minilm.OnnxEmbedder(model_cache=tmp_path)
    if converted:  # the conversion of an earlier start is in the cache
        converted_path(onnx_minilm.WEIGHTS_SHA256, tmp_path).write_bytes(b"")
    seen: list[str] = []

    def convert(weights: Path, sha256: str, cache: Path | None) -> Path:
        seen.append(embedder.phase)
        raise ModelUnavailable("quantizing the model failed (stopped here)", {"reason": "x"})

    monkeypatch.setattr(onnx_minilm, "quantized_weights", convert)
    assert embedder_state(embedder, "auto").state == "idle"
    with pytest.raises(ModelUnavailable):
        embedder.load()
    assert seen == ["loading" if converted else "converting"]
    state = embedder_state(embedder, "auto")
    assert state.state == "failed" and "stopped here" in str(state.error)
