"""The peers of the head benchmark: bm25s and tantivy over the same texts and queries.

Each peer indexes exactly what the head's lexical arm indexes (``indexed_text``: title, claim,
body) and answers each query on its own, one at a time, top 10, returning paths, so its query
latency is comparable with one ``search_head`` call. bm25s runs as shipped (English stop words,
no stemmer, its default Lucene BM25, one thread); tantivy gets an in-memory index written by one
thread, its default tokenizer, and the query as our tokens joined by spaces (an OR query with no
query-syntax characters left to escape), with each hit's stored path read back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.support.head_measure import Timed, latency_summary

TOP_K = 10


@dataclass
class PeerRun:
    """A peer's index time, its per-query latencies, and its ranked paths by query id."""

    name: str
    version: str
    index: Timed
    latencies_s: list[float]
    runs: dict[str, list[str]]

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "index_s": round(self.index.wall_s, 4),
            "index_cpu_s": round(self.index.cpu_s, 4),
            "query": latency_summary(self.latencies_s),
        }


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def run_bm25s(
    paths: Sequence[str], texts: Sequence[str], queries: Sequence[tuple[str, str]]
) -> PeerRun:
    import bm25s

    w0, c0 = _clock()
    tokens = bm25s.tokenize(list(texts), stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    w1, c1 = _clock()
    k = min(TOP_K, len(paths))
    latencies: list[float] = []
    runs: dict[str, list[str]] = {}
    for qid, query in queries:
        start = time.perf_counter()
        q_tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        docs, _scores = retriever.retrieve(q_tokens, k=k, show_progress=False, n_threads=1)
        ranked = [paths[int(i)] for i in docs[0]]
        latencies.append(time.perf_counter() - start)
        runs[qid] = ranked
    return PeerRun("bm25s", bm25s.__version__, Timed(w1 - w0, c1 - c0), latencies, runs)


def run_tantivy(
    paths: Sequence[str],
    texts: Sequence[str],
    queries: Sequence[tuple[str, str]],
    query_tokens: Sequence[Sequence[str]],
) -> PeerRun:
    import tantivy

    w0, c0 = _clock()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("path", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for path, text in zip(paths, texts, strict=True):
        writer.add_document(tantivy.Document(path=path, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    w1, c1 = _clock()
    latencies: list[float] = []
    runs: dict[str, list[str]] = {}
    for (qid, _query), tokens in zip(queries, query_tokens, strict=True):
        start = time.perf_counter()
        ranked: list[str] = []
        if tokens:
            parsed = index.parse_query(" ".join(tokens), ["body"])
            for _score, address in searcher.search(parsed, TOP_K).hits:
                ranked.append(searcher.doc(address)["path"][0])
        latencies.append(time.perf_counter() - start)
        runs[qid] = ranked
    version = getattr(tantivy, "__version__", "unknown")
    return PeerRun("tantivy", str(version), Timed(w1 - w0, c1 - c0), latencies, runs)
