"""A shallower query encoder: what the first layers of the local model cost and what they lose.

    python -m bench.query_encoder_bench --scifact DIR [--locomo DIR] [--layers 2,3]
                                        [--sentences 12000] [--feedback] [--cache-dir DIR]

An unseen query's hybrid search waits on the model's six layers (docs/design/embed.md). This
measures the one way around it that keeps the stored vectors: queries run through the first
``L`` layers of the same converted int8 model (its graph cut at layer ``L``'s output with
``onnx.utils.extract_model``), mean-pooled, then mapped into the six-layer space by a ridge
regression fitted on SciFact corpus sentences (``--sentences``, the six-layer vector of each as
the target). Documents keep their six-layer vectors, so the cache and the fill do not change.

Printed as one JSON object: per ``L``, ``session.run`` CPU for a 21-piece query (median of 200,
beside the whole model's in the same process), the fitted map's mean cosine with the six-layer
query vectors, and R@10 / nDCG@10 of ``dense`` and ``default`` over SciFact's train queries and,
with ``--locomo``, LoCoMo's turn-level questions (no LoCoMo text enters the fit), beside the
six-layer figures; each pair is followed by the nDCG@10 of the queries at even and at odd
places, a check that a lever holds on both halves. ``--feedback`` adds the six-layer default
asked twice, the second time with the query vector moved toward its first answer's best
memories (:func:`feedback_ranker`), over a grid of 3 / 5 / 10 hits and weights 0.3 / 0.6 / 1.0.
Needs the ``embed`` extra (onnxruntime, onnx).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]

#: The converted model's output of layer ``k`` (1-based); the last layer's is the graph output.
LAYER_OUTPUT = "layer_norm_{}"
FINAL_OUTPUT = "last_hidden_state"
LAYERS = 6


def layer_output(k: int) -> str:
    """The tensor holding layer ``k``'s hidden states (1 ≤ k ≤ 6) in the fused int8 graph:
    each layer ends in two layer norms, numbered from the embeddings' one (``layer_norm``)."""
    if not 1 <= k <= LAYERS:
        raise ValueError(f"layer {k} outside 1..{LAYERS}")
    return FINAL_OUTPUT if k == LAYERS else LAYER_OUTPUT.format(2 * k)


def sentences_of(text: str, shortest: int = 5, longest: int = 40) -> list[str]:
    """``text``'s sentences of ``shortest`` to ``longest`` words: query-sized training text."""
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if shortest <= len(s.split()) <= longest]


def fit_map(pooled: Matrix, target: Matrix, ridge: float = 1e-5) -> npt.NDArray[np.float64]:
    """The affine map (``dim + 1`` rows, the last the bias) taking ``pooled`` rows nearest to
    the unit ``target`` rows in least squares, with ``ridge`` times the row count on the
    diagonal."""
    x = np.hstack([pooled, np.ones((len(pooled), 1), dtype=pooled.dtype)]).astype(np.float64)
    gram = x.T @ x + ridge * len(x) * np.eye(x.shape[1])
    return np.asarray(np.linalg.solve(gram, x.T @ target.astype(np.float64)))


def apply_map(pooled: Matrix, mapping: npt.NDArray[np.float64]) -> Matrix:
    """Unit rows of ``pooled`` through ``mapping`` (:func:`fit_map`)."""
    return unit(np.hstack([pooled, np.ones((len(pooled), 1), dtype=pooled.dtype)]) @ mapping)


def unit(rows: Matrix) -> Matrix:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


class LayerModel:
    """The converted model with every layer's hidden states as outputs, one thread."""

    def __init__(self, path: Path) -> None:
        import onnx
        import onnxruntime as ort

        from headd.embed.onnx_minilm import bundled_tokenizer_path, open_session
        from headd.embed.wordpiece import load_tokenizer_json

        model = onnx.load(str(path))
        names = {o.name for o in model.graph.output}
        for k in range(1, LAYERS):
            if layer_output(k) not in names:
                model.graph.output.append(
                    onnx.helper.make_tensor_value_info(
                        layer_output(k), onnx.TensorProto.FLOAT, None
                    )
                )
        self.session = open_session(ort, model.SerializeToString())
        self.tokenizer = load_tokenizer_json(bundled_tokenizer_path())

    def pooled(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """(texts, layers, 384): each layer's hidden states mean-pooled, one text per call."""
        outputs = [layer_output(k) for k in range(1, LAYERS + 1)]
        rows = []
        for text in texts:
            feed = feed_of(self.tokenizer.encode(text, 160))
            rows.append(np.stack([h[0].mean(axis=0) for h in self.session.run(outputs, feed)]))
        return np.asarray(rows, dtype=np.float32)


def feed_of(ids: Sequence[int]) -> dict[str, npt.NDArray[np.int64]]:
    row = np.array([list(ids)], dtype=np.int64)
    return {
        "input_ids": row,
        "attention_mask": np.ones_like(row),
        "token_type_ids": np.zeros_like(row),
    }


def run_cpu_ms(model_path: str, repeat: int = 200) -> float:
    """``session.run`` thread CPU for a 21-piece query, median of ``repeat``."""
    import onnxruntime as ort

    from headd.embed.onnx_minilm import open_session

    session = open_session(ort, model_path)
    feed = feed_of([101, *range(2000, 2019), 102])
    for _ in range(20):
        session.run(None, feed)
    spent = []
    for _ in range(repeat):
        started = time.thread_time()
        session.run(None, feed)
        spent.append(time.thread_time() - started)
    return round(1000 * float(np.median(spent)), 3)


def converted_model() -> Path:
    """The converted int8 model of this machine: the embedder's load checks the installed
    weights against their pinned sha256 and converts them once, under that digest."""
    from headd.embed.onnx_minilm import WEIGHTS_SHA256, OnnxEmbedder
    from headd.embed.quantize import converted_path

    OnnxEmbedder().load()
    return converted_path(WEIGHTS_SHA256)


def feedback_ranker(prepared: Any, hits: int, weight: float) -> Callable[[Any], list[str]]:
    """The default, asked twice: the second time with the query vector moved toward the unit
    vectors of the first answer's ``hits`` best memories (Rocchio's rule on the vector arm,
    ``unit(q + weight * mean(top))``); the lexical arm is the same both times."""
    from bench import quality_bench as qb
    from headd.head.search import HYBRID, search_head
    from headd.head.vectors import VersionMatrix

    matrix = VersionMatrix.build(prepared.view, prepared.cache)
    records = {r.path: r for r in prepared.view.records()}

    def rank(query: Any) -> list[str]:
        vector = prepared.query_vectors[query.qid]
        first = search_head(
            prepared.view, query.text, limit=qb.DEPTH, vectors=matrix, query_vector=vector
        )
        top = [prepared.cache.vector_of(records[hit.path]) for hit in first[:hits]]
        held = [v / np.linalg.norm(v) for v in top if v is not None]
        if not held:
            return [hit.path for hit in first]
        moved = vector + weight * np.mean(held, axis=0)
        moved = (moved / np.linalg.norm(moved)).astype(np.float32)
        again = search_head(
            prepared.view,
            query.text,
            limit=qb.DEPTH,
            vectors=matrix,
            query_vector=moved,
            mode=HYBRID,
        )
        return [hit.path for hit in again]

    return rank


def scores(
    dataset: Any,
    embedder: Any,
    query_vectors: Callable[[Any], Matrix],
    systems: dict[str, Callable[[Any], Callable[[Any], list[str]]]] | None = None,
) -> dict[str, list[float]]:
    """R@10 / nDCG@10 of ``dense`` and ``default`` (or of ``systems``, each a ranker made from
    the prepared corpus), the queries embedded by ``query_vectors``; then the nDCG@10 of the
    queries at even and at odd places."""
    from bench import quality_bench as qb
    from bench.support.quality_metrics import query_scores, summarize

    if systems is None:
        systems = {"dense": qb.dense_ranker, "default": lambda p: qb.head_ranker(p, "default")}
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in systems}
    categories: list[str] = []
    for corpus in dataset.corpora:
        prepared = qb.prepare(corpus, embedder)
        vectors = query_vectors(corpus)
        prepared.query_vectors = {q.qid: v for q, v in zip(corpus.queries, vectors, strict=True)}
        for name, make in systems.items():
            rank = make(prepared)
            rows[name].extend(
                query_scores(rank(q), q.relevant, dataset.metrics) for q in corpus.queries
            )
        categories.extend(q.category for q in corpus.queries)
    out = {}
    for name, per_query in rows.items():
        summary = summarize(per_query, categories, dataset.metrics)["all"]
        halves = [float(np.mean([r["nDCG@10"] for r in per_query[parity::2]])) for parity in (0, 1)]
        out[name] = [round(summary["R@10"], 3), round(summary["nDCG@10"], 3)]
        out[name] += [round(h, 3) for h in halves]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=os.environ.get("HEADD_SCIFACT"))
    parser.add_argument("--locomo", type=Path, default=os.environ.get("HEADD_LOCOMO"))
    parser.add_argument("--layers", default="2,3")
    parser.add_argument("--sentences", type=int, default=12_000)
    parser.add_argument(
        "--feedback",
        action="store_true",
        help="also the six-layer default with the query vector moved toward its best hits",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(
            os.environ.get("HEADD_QUALITY_CACHE") or Path(tempfile.gettempdir()) / "headd-quality"
        ),
    )
    args = parser.parse_args(argv)
    if args.scifact is None:
        parser.error("give --scifact (or $HEADD_SCIFACT)")
    import onnx.utils

    from bench import quality_bench as qb

    layers = [int(k) for k in args.layers.split(",") if k]
    source = converted_model()
    model = LayerModel(source)
    rng = random.Random(7)
    sentences: list[str] = []
    with gzip.open(args.scifact / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            sentences.extend(sentences_of(json.loads(line)["text"]))
    rng.shuffle(sentences)
    train = model.pooled(sentences[: args.sentences])
    target = unit(train[:, LAYERS - 1])
    embedder = qb.DiskCachedEmbedder(qb.make_bench_embedder("auto"), args.cache_dir)
    datasets = [qb.load_scifact(args.scifact)]
    if args.locomo is not None:
        datasets.append(qb.load_locomo(args.locomo)[0])
    pooled = {
        ds.name: model.pooled([q.text for c in ds.corpora for q in c.queries]) for ds in datasets
    }
    out: dict[str, Any] = {
        "model": source.name,
        "sentences": len(train),
        "load_average": list(os.getloadavg()),
        "six_layers": {"run_cpu_ms": run_cpu_ms(str(source))},
    }

    def by_corpus(ds_name: str, vectors: Matrix) -> Callable[[Any], Matrix]:
        offsets: dict[str, int] = {}
        start = 0
        for ds in datasets:
            if ds.name == ds_name:
                for corpus in ds.corpora:
                    offsets[corpus.name] = start
                    start += len(corpus.queries)
        return lambda corpus: vectors[
            offsets[corpus.name] : offsets[corpus.name] + len(corpus.queries)
        ]

    for ds in datasets:
        full = unit(pooled[ds.name][:, LAYERS - 1])
        out["six_layers"][ds.name] = scores(ds, embedder, by_corpus(ds.name, full))
    if args.feedback:
        grid = {"default": lambda p: qb.head_ranker(p, "default")}
        for hits in (3, 5, 10):
            for weight in (0.3, 0.6, 1.0):
                grid[f"feedback_{hits}_{weight}"] = lambda p, h=hits, w=weight: feedback_ranker(
                    p, h, w
                )
        out["feedback"] = {
            ds.name: scores(
                ds, embedder, by_corpus(ds.name, unit(pooled[ds.name][:, LAYERS - 1])), grid
            )
            for ds in datasets
        }
    for k in layers:
        mapping = fit_map(train[:, k - 1], target)
        entry: dict[str, Any] = {
            "train_cosine": round(
                float(np.mean(np.sum(apply_map(train[:, k - 1], mapping) * target, axis=1))), 3
            )
        }
        with tempfile.TemporaryDirectory() as tmp:
            cut = str(Path(tmp) / f"first{k}.onnx")
            onnx.utils.extract_model(
                str(source),
                cut,
                ["input_ids", "attention_mask", "token_type_ids"],
                [layer_output(k)],
            )
            entry["run_cpu_ms"] = run_cpu_ms(cut)
        for ds in datasets:
            full = unit(pooled[ds.name][:, LAYERS - 1])
            mapped = apply_map(pooled[ds.name][:, k - 1], mapping)
            entry[ds.name] = {
                "query_cosine": round(float(np.mean(np.sum(mapped * full, axis=1))), 3),
                **scores(ds, embedder, by_corpus(ds.name, mapped)),
            }
        out[f"first_{k}_layers"] = entry
    json.dump(out, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
