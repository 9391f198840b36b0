"""Scale figures for the SQLite plane's index on SciFact (5,183 abstracts as memory files).

``python -m bench.plane_bench [--docs N] [--queries N] [--embed]`` writes the first ``N``
abstracts (``HEADD_SCIFACT``) as memory files into a fresh git store (``bench.support.stores``,
checked out), then measures in process: a rebuild, an update with nothing changed (the first one
of the process, which checks the drift of every file, then a second), a one-file update, and
lexical search p50/p95 and MRR@10 over the train queries whose judged abstracts are in the store.
Embeddings off (the lexical floor, comparable with memhtml's ``MEMHTML_EMBED=off``), or the
deterministic hashing embedder with ``--embed``. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.support.stores import build_store, scifact_path, scifact_qrels, scifact_queries


def ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5183)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--embed", action="store_true", help="bind the deterministic HashingEmbedder"
    )
    args = parser.parse_args(argv)
    from headd_plane.plane import open_plane

    report: dict[str, object] = {"docs": args.docs, "embedder": "hash" if args.embed else "off"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        build_store(root, args.docs, checkout=True)
        embedder = None
        if args.embed:
            from headd.embed.hashing import HashingEmbedder

            embedder = HashingEmbedder()
        plane = open_plane(root, embedder=embedder)
        started = time.perf_counter()
        rebuilt = plane.rebuild(embed=args.embed)
        report["rebuild"] = {
            "ms": ms_since(started),
            "files": rebuilt.files_indexed,
            "skipped": len(rebuilt.skipped),
            "chunks": rebuilt.chunks_indexed,
        }
        started = time.perf_counter()
        plane.update()
        report["update_unchanged_first_ms"] = ms_since(started)
        started = time.perf_counter()
        plane.update()
        report["update_unchanged_ms"] = ms_since(started)
        target = sorted(root.glob("resources/scifact/*.html"))[0]
        target.write_text(
            target.read_text(encoding="utf-8").replace(
                "</article>", "<p>One more line.</p></article>"
            ),
            encoding="utf-8",
        )
        subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@headd.local"]
            + ["commit", "-qam", "edit"],
            check=True,
        )
        started = time.perf_counter()
        plane.update()
        report["update_one_file_ms"] = ms_since(started)

        present = {p.relative_to(root).as_posix() for p in root.glob("resources/scifact/*.html")}
        qrels = {qid: {scifact_path(doc) for doc in docs} for qid, docs in scifact_qrels().items()}
        judged = [(q, text) for q, text in scifact_queries() if qrels.get(q, set()) & present]
        judged = judged[: args.queries]
        latencies, reciprocal, degraded = [], [], 0
        for qid, text in judged:
            started = time.perf_counter()
            result = plane.search(text)
            latencies.append((time.perf_counter() - started) * 1000)
            degraded += result.degraded
            rank = next((i + 1 for i, h in enumerate(result.hits) if h.path in qrels[qid]), None)
            reciprocal.append(0.0 if rank is None else 1.0 / rank)
        latencies.sort()
        report["search"] = {
            "queries": len(judged),
            "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
            "p95_ms": round(latencies[max(0, int(len(latencies) * 0.95) - 1)], 2)
            if latencies
            else None,
            "mrr_at_10": round(statistics.mean(reciprocal), 4) if reciprocal else None,
            "degraded": degraded,
        }
        report["index_db_mb"] = round(plane.index_path.stat().st_size / 1e6, 1)
        plane.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
