"""``--embedder auto|off|hash|NAME`` (also ``$HEADD_EMBEDDER``) to an embedder or None.

The semantics (docs/protocol.md, ``headd``): ``auto`` (the default) is the local model when the
optional ``embed`` extra is installed and no embedder otherwise, so a plain install runs
lexical-only and says ``degraded``; ``off`` is no embedder; ``hash`` is the deterministic test
embedder; any other name must be a local model we know, and a known model that is not installed is
an error rather than a silent fallback, since the operator asked for it by name.

"Installed" is decided by whether the packages can be found, without importing them: importing
onnxruntime alone takes about half a second, which a daemon's start should not pay for a model it
loads lazily anyway. A model that is installed but broken surfaces as ModelUnavailable at its
first use (the daemon then answers degraded), never at start. For the same reason the embedder
modules (and numpy through them) are imported only when an embedder is made: ``--embedder off``
starts without them.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from headd.errors import ModelUnavailable
from headd.wire.status_parts import EmbedderState

if TYPE_CHECKING:
    from headd.embed.port import DocumentEmbedder

ENV_VAR = "HEADD_EMBEDDER"
DEFAULT_SETTING = "auto"


def extra_modules() -> tuple[str, ...]:
    """The module names the ``embed`` extra installs; all must be importable for "installed".
    ``onnx`` and ``ml_dtypes`` serve the one-time quantization (:mod:`headd.embed.quantize`)."""
    from headd.embed.onnx_minilm import WEIGHTS_PACKAGE

    return ("onnxruntime", WEIGHTS_PACKAGE, "onnx", "ml_dtypes")


@functools.cache
def local_models() -> dict[str, Callable[..., DocumentEmbedder]]:
    """Local models by the names an operator may give; the model id itself is always accepted.

    The default is the quantized model at 160 word pieces. The float-arithmetic model at 160
    (``all-MiniLM-L6-v2-int8-t160``) and at 256 (``all-MiniLM-L6-v2-int8``) are the earlier
    defaults: slower, and the spaces their stores already hold vectors of. The quantized model
    at 256 (``all-MiniLM-L6-v2-q8-t256``) is what the quality bench measures the default's
    token limit against (docs/design.md, "Search quality").
    """
    from headd.embed.onnx_minilm import MODEL_ID, OnnxEmbedder, model_id_for

    return {
        MODEL_ID: OnnxEmbedder,
        "minilm": OnnxEmbedder,
        model_id_for(160, quantized=False): partial(OnnxEmbedder, quantized=False),
        model_id_for(256): partial(OnnxEmbedder, max_tokens=256),
        model_id_for(256, quantized=False): partial(OnnxEmbedder, max_tokens=256, quantized=False),
    }


class _LocalModels(Mapping[str, "Callable[..., DocumentEmbedder]"]):
    """:func:`local_models` as a mapping that imports the model module at its first read."""

    def __getitem__(self, key: str) -> Callable[..., DocumentEmbedder]:
        return local_models()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(local_models())

    def __len__(self) -> int:
        return len(local_models())


LOCAL_MODELS: Mapping[str, Callable[..., DocumentEmbedder]] = _LocalModels()


def local_model_installed(find: Callable[[str], object] = importlib.util.find_spec) -> bool:
    """Whether every package of the ``embed`` extra can be found (nothing is imported)."""
    try:
        return all(find(name) is not None for name in extra_modules())
    except (ImportError, ValueError):
        return False


def embedder_setting(cli_value: str | None, environ: Mapping[str, str]) -> str:
    """The flag wins, then ``$HEADD_EMBEDDER``, then ``auto``; blanks count as unset."""
    for value in (cli_value, environ.get(ENV_VAR)):
        if value is not None and value.strip():
            return value.strip()
    return DEFAULT_SETTING


def make_embedder(
    name: str,
    *,
    installed: Callable[[], bool] = local_model_installed,
    model_cache: Path | None = None,
) -> DocumentEmbedder | None:
    """The embedder ``name`` asks for, or None for ``off`` and for ``auto`` without the extra.

    ``model_cache``: where a local model keeps what it converts once (``headd.embed.quantize``;
    the daemon passes a directory inside its store, None means the user's cache).

    Raises ModelUnavailable for a named local model that is not installed and for a name that is
    not a model at all (the details list the names that are).
    """
    key = name.strip()
    if key == "off":
        return None
    if key == "auto":
        if not installed():
            return None
        from headd.embed.onnx_minilm import OnnxEmbedder

        return OnnxEmbedder(model_cache=model_cache)
    if key == "hash":
        from headd.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    factory = LOCAL_MODELS.get(key)
    if factory is None:
        raise ModelUnavailable(
            "unknown embedder name",
            {
                "model": key,
                "reason": "unknown",
                "known": ["auto", "off", "hash", *sorted(LOCAL_MODELS)],
            },
        )
    if not installed():
        raise ModelUnavailable(
            f"embedding model {key} is not installed (install headd's embed extra)",
            {"model": key, "reason": "not installed"},
        )
    return factory(model_cache=model_cache)


def embedder_state(embedder: object | None, setting: str) -> EmbedderState:
    """``status.embedder_state``: which model answers and where its load stands.

    ``state`` is ``off`` (no embedder: ``reason`` says why), ``idle`` (not loaded yet),
    ``loading``, ``converting`` (the local model's one-time int8 conversion), ``ready`` or
    ``failed`` (``error`` names why; searches answer degraded).
    """
    if embedder is None:
        reason = (
            "the embed extra is not installed" if setting.strip() == "auto" else "--embedder off"
        )
        return EmbedderState(setting, None, "off", reason=reason)
    return EmbedderState(
        setting,
        getattr(embedder, "space", None),
        str(getattr(embedder, "phase", "ready")),
        load_s=getattr(embedder, "load_seconds", None),
        error=getattr(embedder, "failure_reason", None),
    )
