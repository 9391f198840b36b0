"""The vector arm through the daemon: quality on SciFact, speed at 10,000 memories. JSON out.

``python -m bench.vector_bench [--scifact DIR] [--socket PATH] [--big DIR] [--out FILE]``

- ``scifact``: a daemon (``--embedder auto``, the local MiniLM model) on the SciFact store of
  ``bench.support.stores.build_store(dest, 5183)``, or the one already answering on ``--socket``. Its
  persisted cache (``head_vectors`` in index.db) carries the vectors between runs, so only the
  first run pays the ~5k embeddings. Measured: the fill rate of ``vectors.fill`` batches, searches
  answered while the background fill runs (degraded, at lexical speed), then nDCG@10 over the
  SciFact train queries for the lexical arm (``vectors: false``) and hybrid (both arms) through
  the socket, and for the dense arm alone over the same persisted vectors (the daemon has no
  dense-only search, so the bench ranks the daemon's own vectors by cosine in-process).
- ``query_embed``: the p50 of embedding one uncached query with the local model, in-process: the
  default session and one call on one and on two threads (``call_threads``), interleaved.
- ``fill_in_process``: texts per second (wall and CPU) of the local model over the vector texts
  of SciFact memories (what the daemon's fill embeds), in calls of 16 and 64 texts.
- ``real_5183``, ``real_10k``: the SciFact store of 5,183 memories (``--scifact-real``) and the
  10,000-memory store (``--big-real``) served with the local model (``--embedder auto``): their
  vectors put in index.db first (``prefill``, through the quality bench's vectors by text, so
  SciFact's abstracts are embedded once for both benches), the daemon's full coverage waited
  for, then hybrid search p50/p99 over the socket (and the daemon's CPU per query), each query
  new to the daemon, so the hybrid figure includes embedding the query; the same queries again
  (vectors cached) and lexical; the daemon's CPU split between its event loop and its other
  threads (the model's worker); and the split of an unseen query's p50 into embed, search and
  socket. Without full coverage it reports no latency.
- ``at_10k``: a 10,000-memory store served with ``--embedder hash`` (384 dims, the same matrix
  shape as MiniLM, embedded in seconds): hybrid search p50 over the socket, uncached queries, then the same again (cached); and
  in-process the vector arm per search before (``VectorCache``, gathered per search) and after
  (the per-version ``VersionMatrix``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.support.data import cache_dir
from bench.support.stores import build_store, scifact_path, scifact_qrels, scifact_queries

REPO = Path(__file__).resolve().parents[1]


def ndcg_at_10(ranked: Sequence[str], relevant: set[str]) -> float:
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal


def p50(values: Sequence[float]) -> float:
    return round(statistics.median(values), 3) if values else float("nan")


class Served:
    """A daemon subprocess (or one already running) and a client on its socket."""

    def __init__(self, store: Path, embedder: str, socket_path: Path | None = None) -> None:
        from headd_client.sync_client import Client

        self.proc: subprocess.Popen[bytes] | None = None
        if socket_path is None:
            socket_path = Path(tempfile.mkdtemp(prefix="vb-", dir="/tmp")) / "head.sock"
            log = open(socket_path.parent / "headd.log", "wb")  # noqa: SIM115
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "headd.daemon.main", "--store", str(store)]
                + ["--socket", str(socket_path), "--embedder", embedder]
                + ["--snapshot-interval", "-1", "--trace-root", str(socket_path.parent)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(REPO),
            )
        deadline = time.monotonic() + 600
        while True:
            try:
                self.client = Client(socket_path, timeout=600)
                self.client.call("status", {})
                break
            except Exception:
                if time.monotonic() > deadline or (self.proc and self.proc.poll() is not None):
                    raise
                time.sleep(0.2)

    def call(self, method: str, **params: Any) -> Any:
        return self.client.call(method, params)

    def close(self) -> None:
        self.client.close()
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(60)


def wait_covered(served: Served, floor: float, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while True:
        coverage = float(served.call("status")["vectors"]["coverage"])
        if coverage >= floor or time.monotonic() > deadline:
            return coverage
        time.sleep(5)


def wait_indexed(served: Served, timeout: float) -> float | None:
    """Seconds until the plane has indexed the daemon's head (None: not within ``timeout``)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        status = served.call("status")
        index = status.get("index") or {}
        if index.get("indexed_sha") and index.get("indexed_sha") == status.get("sha"):
            return round(time.monotonic() - started, 1)
        time.sleep(0.5)
    return None


def scifact(args: argparse.Namespace) -> dict[str, Any]:
    store = args.scifact
    if args.socket is None and not store.exists():
        build_store(store, 5183)
    served = Served(store, "auto", args.socket)
    out: dict[str, Any] = {"store": str(store)}
    try:
        status = served.call("status")
        out["start"] = {"vectors": status["vectors"], "fill": status.get("vector_fill")}
        queries = scifact_queries()
        qrels = scifact_qrels()
        if status["vectors"]["coverage"] < 1.0:
            started = time.perf_counter()
            filled = served.call("vectors.fill", limit=64)
            took = time.perf_counter() - started
            out["fill_batch"] = {**filled, "seconds": round(took, 2)}
            out["fill_rate_per_s"] = round(filled["embedded"] / took, 2) if took else None
            during: list[float] = []
            degraded = 0
            for _qid, text in queries[:50]:
                t = time.perf_counter()
                answer = served.call("search", query=text)
                during.append((time.perf_counter() - t) * 1000.0)
                degraded += bool(answer["degraded"])
            out["searches_while_filling"] = {
                "count": len(during),
                "degraded": degraded,
                "p50_ms": p50(during),
                "filling": served.call("status")["vector_fill"]["filling"],
            }
        out["coverage_before_quality"] = wait_covered(served, 0.95, args.wait_fill)
        results: dict[str, list[float]] = {"lexical": [], "hybrid": []}
        degraded_hybrid = 0
        for qid, text in queries:
            relevant = {scifact_path(d) for d in qrels.get(qid, set())}
            if not relevant:
                continue
            lexical = served.call("search", query=text, vectors=False)
            hybrid = served.call("search", query=text)
            degraded_hybrid += bool(hybrid["degraded"])
            results["lexical"].append(ndcg_at_10([h["path"] for h in lexical["hits"]], relevant))
            results["hybrid"].append(ndcg_at_10([h["path"] for h in hybrid["hits"]], relevant))
        out["ndcg@10"] = {k: round(statistics.fmean(v), 4) for k, v in results.items() if v}
        out["hybrid_degraded_answers"] = degraded_hybrid
        out["ndcg@10"]["dense"] = dense_ndcg(store, queries, qrels)
    finally:
        served.close()
    return out


def dense_ndcg(
    store: Path, queries: list[tuple[str, str]], qrels: dict[str, set[str]]
) -> float | None:
    """The dense arm alone over the daemon's persisted vectors (cosine, ties by path)."""
    import numpy as np
    import pygit2
    from headd_plane.head_vectors import load_cache
    from headd_plane.plane import index_path_of

    from headd.embed.onnx_minilm import OnnxEmbedder
    from headd.head.vectors import VectorSpace, VersionMatrix
    from headd.head.version import load_head

    embedder = OnnxEmbedder()
    cache = load_cache(index_path_of(store), VectorSpace.parse(embedder.space))
    repo = pygit2.Repository(str(store))
    view = load_head(repo, str(repo.revparse_single("refs/heads/main").id))
    matrix = VersionMatrix.build(view, cache)
    if matrix.coverage < 0.95:
        return None
    scores = []
    for qid, text in queries:
        relevant = {scifact_path(d) for d in qrels.get(qid, set())}
        if not relevant:
            continue
        vector = np.asarray(embedder.embed([text])[0])
        ranked = sorted(matrix.ranked(vector, None, 10), key=lambda r: (-r[0], r[1]))
        scores.append(ndcg_at_10([path for _s, _k, path in ranked], relevant))
    return round(statistics.fmean(scores), 4)


def query_embed(count: int, rounds: int = 3) -> dict[str, Any]:
    """The p50 of one query's embedding in process, with the default session and with one
    call split over one and over two threads (``call_threads``), in interleaved rounds; CPU is
    the process's, so it counts the session's intra-op worker too."""
    from headd.embed.onnx_minilm import OnnxEmbedder

    embedders = {
        "default": OnnxEmbedder(),
        "call_threads_1": OnnxEmbedder(call_threads=1),
        "call_threads_2": OnnxEmbedder(call_threads=2),
    }
    texts = [text for _qid, text in scifact_queries()[:count]]
    times: dict[str, list[float]] = {name: [] for name in embedders}
    cpu: dict[str, list[float]] = {name: [] for name in embedders}
    for embedder in embedders.values():
        embedder.load()
        embedder.embed(texts[:5])
    for _ in range(rounds):
        for name, embedder in embedders.items():
            for text in texts:
                t, c = time.perf_counter(), time.process_time()
                embedder.embed([text])
                times[name].append((time.perf_counter() - t) * 1000.0)
                cpu[name].append((time.process_time() - c) * 1000.0)
    out: dict[str, Any] = {"count": len(texts), "rounds": rounds}
    for name, embedder in embedders.items():
        out[name] = {
            "call_threads": embedder.call_threads,
            "p50_ms": p50(times[name]),
            "cpu_p50_ms": p50(cpu[name]),
        }
        embedder.close()
    out["p50_ms"], out["cpu_p50_ms"] = out["default"]["p50_ms"], out["default"]["cpu_p50_ms"]
    out["load_avg"] = os.getloadavg()[0]
    return out


def fill_rate(count: int) -> dict[str, Any]:
    """Texts per second of the local model on the vector texts of SciFact memories, in process.

    The texts are exactly what the daemon's fill embeds (``vector_text_of`` over the records of
    SciFact memories), in calls of 16 and 64 texts, on the embedder's two threads.
    """
    from bench.support.stores import store_files
    from headd.embed.onnx_minilm import OnnxEmbedder
    from headd.head.vectors import vector_text_of
    from headd.memfile.parse import parse_memory

    texts = [vector_text_of(parse_memory(path, html)) for path, html in store_files(count)]
    embedder = OnnxEmbedder()
    embedder.load()
    embedder.embed(texts[:4])
    out: dict[str, Any] = {
        "space": embedder.space,
        "texts": len(texts),
        "mean_chars": round(statistics.fmean(len(t) for t in texts)),
        "load_avg_start": os.getloadavg()[0],
    }
    for batch in (16, 64):
        wall, cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(texts), batch):
            embedder.embed(texts[start : start + batch])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        out[f"batch_{batch}"] = {
            "texts_per_s": round(len(texts) / wall, 1),
            "texts_per_cpu_s": round(len(texts) / cpu, 1),
        }
    embedder.close()
    return out


#: Seconds a freshly started daemon is left alone before its steady-state latency is taken.
SETTLE_S = 5.0
#: The budget of a hybrid search over the socket, query embedding included (either size).
BUDGET_MS = 5.0


def prefill(store: Path, embed_cache: Path) -> dict[str, Any]:
    """Put in the store's index.db every vector the daemon's fill would embed, before it starts.

    The texts go through the quality bench's disk cache of vectors by space and text
    (``bench.quality_bench.DiskCachedEmbedder``), so SciFact's abstracts, embedded once by
    either bench, are not embedded again; only what neither cache holds is embedded, by the
    local model, in process. The daemon then starts with its cache covering the version, so
    the socket figures are taken at full coverage rather than while a fill competes with them.
    """
    import numpy as np
    import pygit2

    from bench.quality_bench import DiskCachedEmbedder
    from headd.daemon.vectors import PlaneVectorStore
    from headd.embed.onnx_minilm import OnnxEmbedder
    from headd.head.vectors import VectorSpace, fill_vectors
    from headd.head.version import load_head

    embedder = DiskCachedEmbedder(OnnxEmbedder(), embed_cache)
    space = VectorSpace.parse(embedder.space)
    persistence = PlaneVectorStore(store)
    try:
        cache = persistence.load(space)
        repo = pygit2.Repository(str(store))
        view = load_head(repo, str(repo.revparse_single("refs/heads/main").id))
        wall, cpu = time.perf_counter(), time.process_time()
        result = fill_vectors(view, cache, embedder)
        if result.filled:
            vectors = np.stack([result.cache.get(key) for key in result.filled])
            persistence.append(space, result.filled, vectors)
        return {
            "space": space.id,
            "held_before": len(cache),
            "stored": len(result.filled),
            "embedded_by_the_model": embedder.embedded,
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(time.process_time() - cpu, 1),
        }
    finally:
        persistence.close()


def _process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _loop_and_other_cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds of process ``pid``'s main thread (the daemon's event loop) and of its other
    threads together (the model's worker among them), from each thread's ``/proc`` entry."""
    loop = other = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        fields = stat.rpartition(")")[2].split()
        spent = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if int(tid) == pid:
            loop += spent
        else:
            other += spent
    return loop, other


def real_socket(store: Path, size: int, args: argparse.Namespace) -> dict[str, Any]:
    """Hybrid search over the socket with the local model at ``size`` memories, query embedding
    included; the same queries again (their vectors cached) and lexical, for the split.

    The store's vectors are put in index.db first (:func:`prefill`) and the daemon must report
    full coverage before anything is timed: a figure taken while answers are degraded, or
    while a fill runs beside the searches, would time the wrong thing, so then the bench
    reports no latency, only the coverage it saw. The split of an unseen query's wall time:
    ``embed_ms`` is the daemon's time for an unseen query less its time for the same query asked
    again (answered from the query-vector cache), ``search_ms`` the latter, ``socket_ms`` the
    wall less the daemon's time."""
    if not store.exists():
        build_store(store, size)
    queries = [text for _qid, text in scifact_queries()[: args.queries]]
    out: dict[str, Any] = {"store": str(store), "prefill": prefill(store, args.embed_cache)}
    served = Served(store, "auto")
    try:
        started = time.perf_counter()
        out["coverage"] = wait_covered(served, 1.0, args.wait_fill_10k)
        out["fill_wait_s"] = round(time.perf_counter() - started, 1)
        out["status_vectors"] = served.call("status")["vectors"]
        if out["coverage"] < 1.0:
            out["verdict"] = "not measured: the daemon's vectors do not cover the store"
            return out
        # A long-lived daemon answers in its steady state: let the work it does just after READY
        # (the plane's index of the store, snapshot settle, collector freeze) finish first, and
        # say how busy it still is.
        out["index_wait_s"] = wait_indexed(served, args.wait_fill_10k)
        time.sleep(SETTLE_S)
        pid = served.proc.pid if served.proc is not None else None
        if pid is not None:
            idle = _process_cpu_s(pid)
            time.sleep(2.0)
            out["daemon_idle_cpu_ms_per_s"] = round(1000 * (_process_cpu_s(pid) - idle) / 2.0, 1)
        out["load_avg_start"] = os.getloadavg()[0]
        # Each hybrid query is new to the daemon, so it embeds it; hybrid_repeated asks the same
        # again, answered from the query-vector cache. They are SciFact's queries as they are: a
        # suffix to tell the passes apart would lengthen what the model embeds.
        for label, flag, asked in (
            ("hybrid", True, "{}"),
            ("hybrid_repeated", True, "{}"),
            ("lexical", False, "{} (lexical real)"),
        ):
            times, took, degraded = [], [], 0
            cpu = _process_cpu_s(pid) if pid is not None else 0.0
            threads = _loop_and_other_cpu_s(pid) if pid is not None else (0.0, 0.0)
            for text in queries:
                t = time.perf_counter()
                answer = served.call("search", query=asked.format(text), vectors=flag)
                times.append((time.perf_counter() - t) * 1000.0)
                took.append(float(answer.get("took_ms", 0.0)))
                degraded += bool(answer["degraded"])
            if pid is not None:
                spent = _process_cpu_s(pid) - cpu
                out[f"daemon_{label}_cpu_ms_per_query"] = round(1000 * spent / len(queries), 3)
                loop, other = (
                    round(1000 * (after - before) / len(queries), 3)
                    for after, before in zip(_loop_and_other_cpu_s(pid), threads, strict=True)
                )
                out[f"daemon_{label}_cpu_ms_by_thread"] = {"event_loop": loop, "others": other}
            out[f"socket_{label}_p50_ms"] = p50(times)
            out[f"socket_{label}_p99_ms"] = round(sorted(times)[int(len(times) * 0.99) - 1], 3)
            out[f"daemon_{label}_took_p50_ms"] = p50(took)
            out[f"socket_{label}_degraded"] = degraded
        out["load_avg_end"] = os.getloadavg()[0]
        new, again = out["daemon_hybrid_took_p50_ms"], out["daemon_hybrid_repeated_took_p50_ms"]
        out["split_p50_ms"] = {
            "embed_ms": round(new - again, 3),
            "search_ms": again,
            "socket_ms": round(out["socket_hybrid_p50_ms"] - new, 3),
        }
        hybrid = out["socket_hybrid_p50_ms"]
        clean = out["socket_hybrid_degraded"] == 0
        out["verdict"] = (
            "degraded answers: not a hybrid figure"
            if not clean
            else ("pass" if hybrid <= BUDGET_MS else "over budget")
        )
    finally:
        served.close()
    return out


def at_10k(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import pygit2

    from headd.embed.hashing import HashingEmbedder
    from headd.head.search import search_head
    from headd.head.vectors import VectorCache, VectorSpace, VersionMatrix, fill_vectors
    from headd.head.version import load_head

    store = args.big
    if not store.exists():
        build_store(store, 10_000)
    out: dict[str, Any] = {"store": str(store)}
    queries = [text for _qid, text in scifact_queries()[: args.queries]]
    # In-process: one search's vector arm, before (VectorCache) and after (VersionMatrix).
    embedder = HashingEmbedder(dimension=384)
    repo = pygit2.Repository(str(store))
    view = load_head(repo, str(repo.revparse_single("refs/heads/main").id))
    cache = fill_vectors(view, VectorCache.empty(VectorSpace.parse(embedder.space)), embedder).cache
    matrix = VersionMatrix.build(view, cache)
    vectors = embedder.embed(queries)
    for name, arm in (("before_vector_cache", cache), ("after_version_matrix", matrix)):
        times = []
        for text, vector in zip(queries, vectors, strict=True):
            t = time.perf_counter()
            search_head(view, text, vectors=arm, query_vector=np.asarray(vector))
            times.append((time.perf_counter() - t) * 1000.0)
        out[f"in_process_hybrid_{name}_p50_ms"] = p50(times)
    # Through the socket: hash embedder of the same width, uncached queries.
    served = Served(store, "hash")
    try:
        out["coverage"] = wait_covered(served, 1.0, 300)
        # hybrid_repeated asks hybrid's queries again: answered from the query-vector cache.
        for label, flag, asked in (
            ("hybrid", True, "{} (hybrid)"),
            ("hybrid_repeated", True, "{} (hybrid)"),
            ("lexical", False, "{} (lexical)"),
        ):
            times = []
            degraded = 0
            for text in queries:
                t = time.perf_counter()
                answer = served.call("search", query=asked.format(text), vectors=flag)
                times.append((time.perf_counter() - t) * 1000.0)
                degraded += bool(answer["degraded"])
            out[f"socket_{label}_p50_ms"] = p50(times)
            out[f"socket_{label}_degraded"] = degraded
    finally:
        served.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scifact", type=Path, default=cache_dir("vecbench") / "scifact")
    parser.add_argument("--socket", type=Path, default=None, help="attach to a running daemon")
    parser.add_argument("--big", type=Path, default=cache_dir("vecbench") / "n10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--wait-fill", type=float, default=0.0, help="seconds to wait for 95%%")
    parser.add_argument("--big-real", type=Path, default=cache_dir("vecbench") / "n10000-real")
    parser.add_argument("--scifact-real", type=Path, default=cache_dir("vecbench") / "n5183-real")
    parser.add_argument("--wait-fill-10k", type=float, default=120.0)
    parser.add_argument(
        "--embed-cache",
        type=Path,
        default=Path(
            os.environ.get("HEADD_QUALITY_CACHE") or Path(tempfile.gettempdir()) / "headd-quality"
        ),
        help="the quality bench's vectors by text, shared (default: its default)",
    )
    parser.add_argument("--fill-texts", type=int, default=240)
    parser.add_argument(
        "--skip", action="append", default=[], help="scifact|embed|fill|10k|real5k|real10k"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"load_avg_start": os.getloadavg()[0]}
    if "embed" not in args.skip:
        report["query_embed"] = query_embed(args.queries)
    if "fill" not in args.skip:
        report["fill_in_process"] = fill_rate(args.fill_texts)
    if "10k" not in args.skip:
        report["at_10k"] = at_10k(args)
    if "real5k" not in args.skip:
        report["real_5183"] = real_socket(args.scifact_real, 5183, args)
    if "real10k" not in args.skip:
        report["real_10k"] = real_socket(args.big_real, 10_000, args)
    if "scifact" not in args.skip:
        report["scifact"] = scifact(args)
    report["load_avg_end"] = os.getloadavg()[0]
    text = json.dumps(report, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
