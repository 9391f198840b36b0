"""Scale figures for the SQLite plane's index on SciFact (5,183 abstracts as memory files).

Writes each abstract as a memory file (first sentence as the claim) into a fresh git store,
then measures: rebuild, a one-file update, an update with nothing changed, and lexical search
latency (p50/p95) and MRR@10 on the train queries. Embeddings off (the lexical floor), so the
numbers are comparable with memhtml's MEMHTML_EMBED=off path.

Run: ``python bench/plane_scale.py [--docs N] [--queries N]``.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from plane_testkit import Store  # noqa: E402


def shared_dir() -> Path:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "data").is_dir():
            return candidate
    raise SystemExit("shared data not found")


def memory_file(title: str, text: str) -> str:
    first, _, rest = text.partition(". ")
    claim = (first or title).strip().rstrip(".") + "."
    body = rest.strip()
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f"<title>{html.escape(title.strip() or 'Untitled')}</title>",
            '<meta name="memhtml-type" content="semantic">',
            '<meta name="memhtml-status" content="active">',
            '<meta name="memhtml-created" content="2026-11-01T09:00:00Z">',
            '<meta name="memhtml-updated" content="2026-11-01T09:00:00Z">',
            "</head>",
            "<body>",
            "<article>",
            f"<p><mark>{html.escape(claim)}</mark></p>",
            f"<p>{html.escape(body)}</p>" if body else "",
            "</article>",
            "</body>",
            "</html>",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5183)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--embed", action="store_true", help="bind the team's deterministic HashingEmbedder"
    )
    args = parser.parse_args()
    from headd_plane.plane import open_plane

    data = shared_dir() / "data" / "scifact"
    docs = []
    with gzip.open(data / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            docs.append(json.loads(line))
            if len(docs) >= args.docs:
                break
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store")
        files = {
            f"resources/scifact/d{d['_id']}.html": memory_file(d["title"], d["text"]) for d in docs
        }
        store.commit(files)
        embedder = None
        if args.embed:
            from headd.embed.hashing import HashingEmbedder

            embedder = HashingEmbedder()
        plane = open_plane(store.root, embedder=embedder)
        started = time.perf_counter()
        report = plane.rebuild(embed=args.embed)
        rebuild_s = time.perf_counter() - started
        print(
            f"rebuild: {report.files_indexed} files, {len(report.skipped)} skipped, "
            f"{report.chunks_indexed} chunks in {rebuild_s:.2f} s"
        )
        started = time.perf_counter()
        plane.update()
        print(
            f"update, nothing changed (first in process, full drift check): "
            f"{(time.perf_counter() - started) * 1000:.1f} ms"
        )
        started = time.perf_counter()
        plane.update()
        print(f"update, nothing changed: {(time.perf_counter() - started) * 1000:.1f} ms")
        target = next(iter(files))
        store.commit(
            {target: files[target].replace("</article>", "<p>One more line.</p></article>")}
        )
        started = time.perf_counter()
        plane.update()
        print(f"update, one file changed: {(time.perf_counter() - started) * 1000:.1f} ms")

        queries = []
        with open(data / "queries-train.jsonl", encoding="utf-8") as fh:
            for line in fh:
                queries.append(json.loads(line))
        qrels: dict[str, set[str]] = {}
        for line in (data / "qrels-train.tsv").read_text().splitlines()[1:]:
            qid, cid, _ = line.split("\t")
            qrels.setdefault(qid, set()).add(f"resources/scifact/d{cid}.html")
        present = {f"resources/scifact/d{d['_id']}.html" for d in docs}
        judged = [q for q in queries if qrels.get(q["_id"], set()) & present][: args.queries]
        latencies, reciprocal = [], []
        degraded = 0
        for q in judged:
            started = time.perf_counter()
            result = plane.search(q["text"])
            hits = result.hits
            degraded += result.degraded
            latencies.append((time.perf_counter() - started) * 1000)
            rank = next((i + 1 for i, h in enumerate(hits) if h.path in qrels[q["_id"]]), None)
            reciprocal.append(0.0 if rank is None else 1.0 / rank)
        latencies.sort()
        print(
            f"search over {len(judged)} queries: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.1f} ms, "
            f"MRR@10 {statistics.mean(reciprocal):.3f}; {degraded} degraded "
            f"({'hashing embedder bound' if args.embed else 'no embedder: lexical floor'})"
        )
        print(f"index.db size: {plane.index_path.stat().st_size / 1e6:.1f} MB")
        plane.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
