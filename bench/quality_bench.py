"""Retrieval quality side by side: LoCoMo (turn and session level) and SciFact, as JSON.

    python -m bench.quality_bench --locomo DIR --scifact DIR [--cache-dir DIR]
                                  [--embedder auto|hash|NAME] [--systems a,b,...] [--markdown]
                                  [--holdout] [--cost N] [--passages]

``--locomo`` (or ``$HEADD_LOCOMO``) is a folder of LoCoMo conversations (``conv-*.json``);
``--scifact`` (or ``$HEADD_SCIFACT``) a BEIR SciFact folder (``corpus.jsonl.gz``,
``queries-train.jsonl``, ``qrels-train.tsv``). Either may be left out. Nothing of either is
written into the repository; vectors are cached under ``--cache-dir`` (or
``$HEADD_QUALITY_CACHE``, else the system temp dir), keyed by vector space and text.

Data sets, each ranked by every system in the same run:

- ``locomo-turn``: one memory per dialog turn (title: the speaker and the session's date; claim:
  the text; body: the shared photo's caption), one store per conversation, the question as the
  query, relevance the evidence turns; categories 1-4 (5, unanswerable, is left out). Evidence
  strings are normalised: ``;``-separated lists split, ``D:11:26`` read as ``D11:26``, leading
  zeros dropped (``D30:05`` is ``D30:5``); an id naming no turn is dropped, and a question left
  with no evidence is dropped.
- ``locomo-session``: one memory per session (title: the session and its date; claim: its first
  turn; body: every turn as ``speaker: text``), relevance the sessions holding evidence.
- ``scifact``: the BEIR corpus as memories (``bench.support.stores.scifact_memory``), the train queries.

``--cost N`` prints, for each data set, the CPU per query of the default's conversation rules
(threads and questions about time) over the set copied to ``N`` memories (see
:func:`rules_cost`).

``--passages [UNIT]`` has every system over the default's vectors (``default``,
``seed-hybrid``, and ``--holdout``'s grid) rank with chunked vectors, a memory's cosine the best
of its rows (:mod:`bench.support.passages`): the article cut into passages of 158 word pieces
(``pieces``, the default), into its sentences (``sentences``; ``bare-sentences`` without the
title's vector added to each row), or into each two sentences in a row (``sentence-pairs``).

``--holdout`` checks the default's tuned constants on data they are not tuned on, and prints
that instead: LoCoMo's conversations one left out at a time, SciFact's train queries in two fixed
halves (by the parity of the query id's position in id order). Each rotation picks, by nDCG@10
over its tuning part, the best of a grid over :data:`TUNED` (every combination), and scores the
part it held out with that pick; the held-out figures pool those scores, beside ``lexical`` and
the shipped ``default`` on the same queries (see :func:`holdout`).

Systems: ``lexical`` (the seed's exact search: BM25 arm alone), ``seed-default`` (the seed's
fusion, RRF at 60 with equal weights, over article vectors alone: the default as the seed
shipped it), ``seed-hybrid`` (the seed's fusion over the default's vectors, titles included),
``default`` (what ``search`` answers with the default embedder), ``dense`` (cosine alone over
the default's vectors),
``bm25s``, ``tantivy`` and ``tantivy-en_stem`` (the ``bench`` extra), ``memhtml`` (0.15.1's
``memory_search`` through its MCP server, when ``bench/peers/peers.sh`` installed it; see
:class:`MemhtmlRanker`). Metrics: R@5, R@10 and nDCG@10
(session level: R@1, R@3, R@10, nDCG@10), overall and per category; stdout is one JSON object,
``--markdown`` also prints the tables to stderr.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.support.passages import UNITS, PassageMatrix, bundled_pieces
from bench.support.quality_metrics import metric_names, query_scores, summarize
from headd.head.search import HYBRID, SEED_EXACT, search_head
from headd.head.vectors import VectorCache, VectorSpace, VersionMatrix, fill_vectors
from headd.head.version import parse_record, version_from_records

DEPTH = 10
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


# -- data ------------------------------------------------------------------------------------


@dataclass
class Query:
    qid: str
    text: str
    category: str
    relevant: set[str]


@dataclass
class Corpus:
    """One store's memories (path -> html) and the queries asked of it."""

    name: str
    memories: dict[str, str]
    queries: list[Query]
    #: path -> the plain text an outside engine indexes (title and body).
    plain: dict[str, str] = field(default_factory=dict)


@dataclass
class DataSet:
    name: str
    corpora: list[Corpus]
    metrics: list[str]


def _render(title: str, claim: str, body: str, at: str) -> str:
    from bench.support.stores import render

    return render(title, claim, body, memory_type="episodic", created=at)


def _locomo_time(text: str) -> str:
    """``1:56 pm on 8 May, 2023`` as ISO 8601 UTC (the event time of the session's memories)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:00Z")


_DIA = re.compile(r"D:?(\d+):(\d+)")


def normalise_evidence(evidence: Iterable[str]) -> list[str]:
    """LoCoMo evidence ids as ``D<session>:<turn>`` (see the module docstring for the rules)."""
    out: list[str] = []
    for item in evidence:
        for part in re.split(r"[;,]", str(item)):
            match = _DIA.search(part.strip())
            if match:
                out.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return out


def _sessions(conv: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    out = []
    for key, turns in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list) and turns:
            k = int(match.group(1))
            out.append((k, conv[f"session_{k}_date_time"], turns))
    return sorted(out)


def load_locomo(root: Path) -> tuple[DataSet, DataSet]:
    turn_corpora: list[Corpus] = []
    session_corpora: list[Corpus] = []
    for file in sorted(root.glob("conv-*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        conv = data.get("conversation", data)
        name = file.stem
        turns: dict[str, str] = {}
        turn_plain: dict[str, str] = {}
        sessions: dict[str, str] = {}
        session_plain: dict[str, str] = {}
        path_of_turn: dict[str, str] = {}
        session_of_turn: dict[str, str] = {}
        for k, when, session in _sessions(conv):
            at = _locomo_time(when)
            session_path = f"areas/{name}/session-{k:02d}.html"
            lines = []
            for turn in session:
                dia = normalise_evidence([turn["dia_id"]])[0]
                text = turn["text"].strip()
                caption = turn.get("blip_caption")
                body = f"[shared a photo: {caption}]" if caption else ""
                title = f"{turn['speaker']}, {when}"
                _, number = dia.split(":")
                path = f"areas/{name}/s{k:02d}/turn-{int(number):03d}.html"
                turns[path] = _render(title, text or body or title, body, at)
                turn_plain[path] = f"{title} {text} {body}"
                path_of_turn[dia] = path
                session_of_turn[dia] = session_path
                lines.append(f"{turn['speaker']}: {text} {body}".strip())
            title = f"Session {k}, {when}"
            sessions[session_path] = _render(title, lines[0], " ".join(lines[1:]), at)
            session_plain[session_path] = f"{title} {' '.join(lines)}"
        turn_queries: list[Query] = []
        session_queries: list[Query] = []
        for index, qa in enumerate(data.get("qa", [])):
            category = LOCOMO_CATEGORIES.get(int(qa.get("category", 0)))
            if category is None:
                continue
            ids = [d for d in normalise_evidence(qa.get("evidence", [])) if d in path_of_turn]
            if not ids:
                continue
            qid = f"{name}/{index}"
            turn_queries.append(
                Query(qid, qa["question"], category, {path_of_turn[d] for d in ids})
            )
            session_queries.append(
                Query(qid, qa["question"], category, {session_of_turn[d] for d in ids})
            )
        turn_corpora.append(Corpus(name, turns, turn_queries, turn_plain))
        session_corpora.append(Corpus(name, sessions, session_queries, session_plain))
    return (
        DataSet("locomo-turn", turn_corpora, metric_names((5, 10))),
        DataSet("locomo-session", session_corpora, metric_names((1, 3, 10))),
    )


def load_scifact(root: Path) -> DataSet:
    from bench.support.stores import scifact_memory, scifact_path, scifact_qrels, scifact_queries

    memories: dict[str, str] = {}
    plain: dict[str, str] = {}
    with gzip.open(root / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            path = scifact_path(str(doc["_id"]))
            memories[path] = scifact_memory(
                str(doc["_id"]), doc["title"].strip(), doc["text"].strip()
            )
            plain[path] = f"{doc['title']} {doc['text']}"
    qrels = {qid: {scifact_path(did) for did in dids} for qid, dids in scifact_qrels(root).items()}
    queries = [
        Query(qid, text, "all", qrels[qid]) for qid, text in scifact_queries(root) if qid in qrels
    ]
    return DataSet("scifact", [Corpus("scifact", memories, queries, plain)], metric_names((5, 10)))


# -- vectors ---------------------------------------------------------------------------------


class DiskCachedEmbedder:
    """An embedder of the same space whose vectors persist under ``root``, keyed by the
    space and the text's sha256 (so any text embedded once, in any run, is never embedded again)."""

    def __init__(self, inner: Any, root: Path) -> None:
        self.inner = inner
        self.root = root / re.sub(r"[^A-Za-z0-9._@-]", "_", inner.space)
        self.root.mkdir(parents=True, exist_ok=True)
        self._file = self.root / "vectors.npz"
        self._rows: dict[str, npt.NDArray[np.float32]] = {}
        if self._file.exists():
            with np.load(self._file) as data:
                for key, row in zip(data["keys"].tolist(), data["matrix"], strict=True):
                    self._rows[str(key)] = row
        self.embedded = 0

    @property
    def space(self) -> str:
        return str(self.inner.space)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._rows}.items()
        )
        if missing:
            vectors = np.asarray(self.inner.embed([t for _, t in missing]), dtype=np.float32)
            for (key, _), row in zip(missing, vectors, strict=True):
                self._rows[key] = row
            self.embedded += len(missing)
            self._save()
        if not keys:
            dim = int(self.space.rpartition("@")[2])
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._rows[k] for k in keys])

    def _save(self) -> None:
        with tempfile.NamedTemporaryFile(dir=self.root, suffix=".npz", delete=False) as fh:
            np.savez(
                fh, keys=np.array(list(self._rows)), matrix=np.stack(list(self._rows.values()))
            )
        os.replace(fh.name, self._file)


def make_bench_embedder(name: str) -> Any:
    from headd.embed.factory import make_embedder

    embedder = make_embedder(name)
    if embedder is None:
        raise SystemExit(f"no embedder for {name!r} (install the embed extra)")
    return embedder


# -- systems ---------------------------------------------------------------------------------

Ranker = Callable[[Query], list[str]]


@dataclass
class Prepared:
    """One corpus as every system sees it."""

    corpus: Corpus
    view: Any
    cache: VectorCache | None
    query_vectors: dict[str, npt.NDArray[np.float32]]
    #: The vector arm over passages (max-sim), when ``--passages`` asked for it.
    passages: PassageMatrix | None = None


#: ``--passages``: the systems over the default's vectors rank with :class:`PassageMatrix`,
#: the article cut by this unit (a key of ``UNITS``); None ranks with the record vectors.
PASSAGES: str | None = None


def prepare(corpus: Corpus, embedder: Any | None) -> Prepared:
    records = [parse_record(path, html) for path, html in corpus.memories.items()]
    view = version_from_records(records, corpus.name)
    if embedder is None:
        return Prepared(corpus, view, None, {})
    space = VectorSpace.parse(embedder.space)
    cache = fill_vectors(view, VectorCache.empty(space), embedder).cache
    vectors = embedder.embed([q.text for q in corpus.queries])
    passages = (
        PassageMatrix.build(view, cache, embedder, bundled_pieces(), PASSAGES) if PASSAGES else None
    )
    return Prepared(
        corpus,
        view,
        cache,
        {q.qid: v for q, v in zip(corpus.queries, vectors, strict=True)},
        passages,
    )


def head_ranker(prepared: Prepared, system: str) -> Ranker:
    # the daemon's own vector arm: one matrix per version over the cache
    vectors: Any = (
        None if prepared.cache is None else VersionMatrix.build(prepared.view, prepared.cache)
    )
    if prepared.passages is not None:
        vectors = prepared.passages
    if system == "seed-default" and prepared.cache is not None:
        # the seed's default as it shipped: its fusion over article vectors alone (a mapping
        # without title keys gives each record its article's vector)
        cache = prepared.cache
        vectors = {r.content_hash: cache.get(r.content_hash) for r in prepared.view.records()}

    def rank(query: Query) -> list[str]:
        if system == "lexical":
            hits = search_head(prepared.view, query.text, limit=DEPTH, mode=SEED_EXACT)
        else:
            hits = search_head(
                prepared.view,
                query.text,
                limit=DEPTH,
                vectors=vectors,
                query_vector=prepared.query_vectors[query.qid],
                mode=HYBRID if system == "default" else SEED_EXACT,
            )
        return [hit.path for hit in hits]

    return rank


def dense_ranker(prepared: Prepared) -> Ranker:
    cache = prepared.cache
    assert cache is not None
    records = sorted(prepared.view.records(), key=lambda r: r.path)
    vectors = [(r.path, cache.vector_of(r)) for r in records]
    held = [(path, v) for path, v in vectors if v is not None]
    paths = [path for path, _ in held]
    matrix = np.stack([v / np.linalg.norm(v) for _, v in held])

    def rank(query: Query) -> list[str]:
        scores = matrix @ prepared.query_vectors[query.qid]
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        return [paths[i] for i in order.tolist()]

    return rank


def bm25s_ranker(prepared: Prepared) -> Ranker:
    import bm25s

    paths = list(prepared.corpus.plain)
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(
            [prepared.corpus.plain[p] for p in paths], stopwords="en", show_progress=False
        ),
        show_progress=False,
    )

    def rank(query: Query) -> list[str]:
        tokens = bm25s.tokenize([query.text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        k = min(DEPTH, len(paths))
        ids, _scores = retriever.retrieve(tokens, k=k, show_progress=False)
        return [paths[i] for i in ids[0].tolist()]

    return rank


def tantivy_ranker(prepared: Prepared, tokenizer: str) -> Ranker:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("path", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, tokenizer_name=tokenizer)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for path, text in prepared.corpus.plain.items():
        writer.add_document(tantivy.Document(path=path, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()

    def rank(query: Query) -> list[str]:
        words = re.findall(r"\w+", query.text)
        if not words:
            return []
        parsed = index.parse_query(" ".join(words), ["body"])
        found = searcher.search(parsed, DEPTH).hits
        return [searcher.doc(address)["path"][0] for _score, address in found]

    return rank


class MemhtmlRanker:
    """memhtml 0.15.1's search over a store of the corpus, when ``bench/peers/peers.sh`` has
    installed it: the store committed, ``memhtml index rebuild``, then one ``memory_search``
    call per query to its long-lived MCP server (a CLI process per query would cost a Node
    start each). memhtml runs with ``MEMHTML_EMBED=off``: its dense arm needs a hosted model,
    so it answers from its lexical floor (FTS5, recency, salience), as in ``daemon_bench``."""

    def __init__(self, prepared: Prepared, workdir: Path) -> None:
        import subprocess

        from bench.peers.memhtml_mcp import McpServer, pick_search_tool, run_memhtml

        store = workdir / prepared.corpus.name
        for path, html in prepared.corpus.memories.items():
            target = store / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(html, encoding="utf-8")
        git = ["git", "-C", str(store), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        subprocess.run(["git", "init", "-q", str(store)], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "corpus"], check=True)
        run_memhtml(store, ["index", "rebuild"])
        self.server = McpServer(store)
        self.server.handshake()
        self.tool, self.query_arg, self.limit_arg = pick_search_tool(
            self.server.request("tools/list")["tools"]
        )

    def __call__(self, query: Query) -> list[str]:
        arguments: dict[str, Any] = {self.query_arg: query.text}
        if self.limit_arg is not None:
            arguments[self.limit_arg] = DEPTH
        answer = self.server.request("tools/call", {"name": self.tool, "arguments": arguments})
        texts = [part.get("text", "") for part in answer.get("content", [])]
        try:
            hits = json.loads(texts[0]).get("hits", []) if texts else []
        except json.JSONDecodeError:
            return []
        return [row["path"] for row in hits if isinstance(row, dict) and "path" in row][:DEPTH]

    def close(self) -> None:
        self.server.close()


def memhtml_ranker(prepared: Prepared, workdir: Path) -> MemhtmlRanker | None:
    from bench.peers.memhtml_mcp import PEER_DIR

    if not (PEER_DIR / ".bin" / "memhtml").exists():
        return None
    return MemhtmlRanker(prepared, workdir)


ALL_SYSTEMS = (
    "lexical",
    "default",
    "seed-default",
    "seed-hybrid",
    "dense",
    "bm25s",
    "tantivy",
    "tantivy-en_stem",
    "memhtml",
)


def rankers(prepared: Prepared, systems: Sequence[str], workdir: Path) -> dict[str, Ranker]:
    out: dict[str, Ranker] = {}
    for system in systems:
        needs_vectors = system in ("default", "seed-default", "seed-hybrid", "dense")
        if needs_vectors and prepared.cache is None:
            continue
        if system in ("lexical", "default", "seed-default", "seed-hybrid"):
            out[system] = head_ranker(prepared, system)
        elif system == "dense":
            out[system] = dense_ranker(prepared)
        elif system == "bm25s":
            out[system] = bm25s_ranker(prepared)
        elif system == "tantivy":
            out[system] = tantivy_ranker(prepared, "default")
        elif system == "tantivy-en_stem":
            out[system] = tantivy_ranker(prepared, "en_stem")
        elif system == "memhtml":
            ranker = memhtml_ranker(prepared, workdir)
            if ranker is not None:
                out[system] = ranker
    return out


def run_dataset(
    dataset: DataSet, embedder: Any | None, systems: Sequence[str], workdir: Path
) -> dict[str, Any]:
    per_system: dict[str, list[dict[str, float]]] = {}
    categories: list[str] = []
    seconds: dict[str, float] = {}
    for corpus in dataset.corpora:
        prepared = prepare(corpus, embedder)
        categories.extend(q.category for q in corpus.queries)
        for system, rank in rankers(prepared, systems, workdir).items():
            started = time.process_time()
            rows = per_system.setdefault(system, [])
            for query in corpus.queries:
                rows.append(query_scores(rank(query), query.relevant, dataset.metrics))
            seconds[system] = seconds.get(system, 0.0) + time.process_time() - started
            if isinstance(rank, MemhtmlRanker):
                rank.close()
    return {
        "queries": len(categories),
        "memories": sum(len(c.memories) for c in dataset.corpora),
        "metrics": dataset.metrics,
        "systems": {
            system: {
                "cpu_ms_per_query": round(1000 * seconds[system] / max(1, len(rows)), 3),
                "scores": summarize(rows, categories, dataset.metrics),
            }
            for system, rows in per_system.items()
        },
    }


# -- held-out check --------------------------------------------------------------------------

#: The default's tuned constants, as (module, name) -> the grid ``--holdout`` picks from.
TUNED: dict[tuple[str, str], tuple[float, ...]] = {
    ("headd.head.search", "LEXICAL_SHARE"): (0.6, 0.7, 0.8),
    ("headd.head.threads", "THREAD_LIFT"): (0.0, 0.4, 0.6, 0.8),
    ("headd.head.temporal", "TIME_BONUS"): (0.0, 0.2, 0.3, 0.5),
}


def _grid(tuned: dict[tuple[str, str], tuple[float, ...]]) -> list[dict[tuple[str, str], float]]:
    combos: list[dict[tuple[str, str], float]] = [{}]
    for key, values in tuned.items():
        combos = [{**combo, key: value} for combo in combos for value in values]
    return combos


class _Constants:
    """The tuned constants set to one combination of the grid inside the block, restored on leaving."""

    def __init__(self, values: dict[tuple[str, str], float]) -> None:
        self.values = values
        self.saved: dict[tuple[str, str], Any] = {}

    def __enter__(self) -> None:
        import importlib

        for (module, name), value in self.values.items():
            target = importlib.import_module(module)
            self.saved[(module, name)] = getattr(target, name)
            setattr(target, name, value)

    def __exit__(self, *exc: object) -> None:
        import importlib

        for (module, name), value in self.saved.items():
            setattr(importlib.import_module(module), name, value)


def holdout_folds(dataset: DataSet) -> list[tuple[str, dict[str, str]]]:
    """(fold name, query id -> its fold) for every rotation's held-out part: each LoCoMo
    conversation; SciFact's two halves of its queries in id order (even and odd positions)."""
    if len(dataset.corpora) > 1:
        fold_of = {q.qid: c.name for c in dataset.corpora for q in c.queries}
    else:
        ids = sorted(q.qid for c in dataset.corpora for q in c.queries)
        fold_of = {qid: ("even" if i % 2 == 0 else "odd") for i, qid in enumerate(ids)}
    return [(name, fold_of) for name in sorted(set(fold_of.values()))]


def holdout(
    dataset: DataSet,
    embedder: Any,
    tuned: dict[tuple[str, str], tuple[float, ...]] | None = None,
    pick_by: str = "nDCG@10",
) -> dict[str, Any]:
    """The held-out check of one data set: every query scored by ``lexical``, the shipped
    ``default`` and every combination of ``tuned``'s grid; then, for each rotation, the
    combination best by ``pick_by`` on the queries of the other folds, scored on the held-out
    fold. ``held_out`` pools the rotations' picks over every query (each scored by a pick that
    never saw it); ``lexical`` and ``default`` are the same queries' figures, per fold too."""
    combos = _grid(TUNED if tuned is None else tuned)
    per_query: dict[str, dict[str, dict[str, float]]] = {"lexical": {}, "default": {}}
    category: dict[str, str] = {}
    for index in range(len(combos)):
        per_query[f"grid-{index}"] = {}
    for corpus in dataset.corpora:
        prepared = prepare(corpus, embedder)
        for query in corpus.queries:
            category[query.qid] = query.category
        for system in ("lexical", "default"):
            rank = head_ranker(prepared, system)
            for query in corpus.queries:
                scores = query_scores(rank(query), query.relevant, dataset.metrics)
                per_query[system][query.qid] = scores
        rank = head_ranker(prepared, "default")
        for index, combo in enumerate(combos):
            with _Constants(combo):
                for query in corpus.queries:
                    scores = query_scores(rank(query), query.relevant, dataset.metrics)
                    per_query[f"grid-{index}"][query.qid] = scores

    def mean(system: str, qids: Sequence[str]) -> float:
        rows = per_query[system]
        return sum(rows[q][pick_by] for q in qids) / max(1, len(qids))

    def summary(system: str, qids: Sequence[str]) -> dict[str, dict[str, float]]:
        rows = per_query[system]
        return summarize([rows[q] for q in qids], [category[q] for q in qids], dataset.metrics)

    rotations = []
    held_rows: list[dict[str, float]] = []
    held_qids: list[str] = []
    for fold, fold_of in holdout_folds(dataset):
        tune = [q for q, f in fold_of.items() if f != fold]
        check = [q for q, f in fold_of.items() if f == fold]
        best = max(range(len(combos)), key=lambda i: (mean(f"grid-{i}", tune), -i))
        picked = {f"{module}.{name}": value for (module, name), value in combos[best].items()}
        rows = per_query[f"grid-{best}"]
        held_rows.extend(rows[q] for q in check)
        held_qids.extend(check)
        rotations.append(
            {
                "held_out": fold,
                "queries": len(check),
                "picked": picked,
                "tuning": round(mean(f"grid-{best}", tune), 4),
                "held_out_scores": {
                    "picked": summary(f"grid-{best}", check)["all"],
                    "default": summary("default", check)["all"],
                    "lexical": summary("lexical", check)["all"],
                },
            }
        )
    return {
        "queries": len(held_qids),
        "memories": sum(len(c.memories) for c in dataset.corpora),
        "metrics": dataset.metrics,
        "picked_by": pick_by,
        "grid": {f"{m}.{n}": list(v) for (m, n), v in (TUNED if tuned is None else tuned).items()},
        "rotations": rotations,
        "systems": {
            "held-out": {
                "scores": summarize(held_rows, [category[q] for q in held_qids], dataset.metrics)
            },
            "default": {"scores": summary("default", held_qids)},
            "lexical": {"scores": summary("lexical", held_qids)},
        },
    }


# -- the conversation rules' cost ------------------------------------------------------------


def rules_cost(dataset: DataSet, embedder: Any, size: int = 10_000) -> dict[str, Any]:
    """CPU per query of the hybrid search over ``dataset``'s memories copied into folders of
    their own until the store holds ``size`` (each copy a conversation of its own, so threads
    are as many as in a real store of that size), and of the part of it spent in the
    conversation rules (threads, questions about time), timed inside them; the median of three
    passes over every query."""
    import statistics

    import headd.head.search as search

    memories: dict[str, str] = {}
    copy = 0
    while len(memories) < size:
        for corpus in dataset.corpora:
            for path, html in corpus.memories.items():
                memories[path.replace("areas/", f"areas/copy-{copy}/", 1)] = html
        copy += 1
    queries = [q for corpus in dataset.corpora for q in corpus.queries]
    prepared = prepare(Corpus(f"{dataset.name}-{size}", memories, queries), embedder)
    rank = head_ranker(prepared, "default")
    lift, favour = search.lift_threads, search.favour_times
    inside = [0.0]

    def timed(rule: Callable[..., dict[str, float]]) -> Callable[..., dict[str, float]]:
        def run(*args: Any) -> dict[str, float]:
            started = time.process_time()
            try:
                return rule(*args)
            finally:
                inside[0] += time.process_time() - started

        return run

    search.lift_threads, search.favour_times = timed(lift), timed(favour)  # type: ignore[assignment]
    totals: list[float] = []
    rules: list[float] = []
    try:
        for _ in range(3):
            inside[0] = 0.0
            started = time.process_time()
            for query in queries:
                rank(query)
            totals.append(time.process_time() - started)
            rules.append(inside[0])
    finally:
        search.lift_threads, search.favour_times = lift, favour
    return {
        "memories": len(memories),
        "queries": len(queries),
        "cpu_ms_per_query": round(1000 * statistics.median(totals) / len(queries), 4),
        "rules_cpu_ms_per_query": round(1000 * statistics.median(rules) / len(queries), 4),
    }


def markdown(name: str, result: dict[str, Any]) -> str:
    metrics: list[str] = result["metrics"]
    systems = result["systems"]
    groups = list(next(iter(systems.values()))["scores"]) if systems else []
    lines = [f"### {name} ({result['memories']} memories, {result['queries']} queries)", ""]
    for group in groups:
        n = next(iter(systems.values()))["scores"][group]["n"]
        lines += [f"{group} (n = {n})", "", "| system | " + " | ".join(metrics) + " |"]
        lines.append("|---|" + "---|" * len(metrics))
        for system, row in systems.items():
            scores = row["scores"][group]
            lines.append(f"| {system} | " + " | ".join(f"{scores[m]:.3f}" for m in metrics) + " |")
        lines.append("")
    for rotation in result.get("rotations", ()):
        lines.append(f"held out {rotation['held_out']}: picked {rotation['picked']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=os.environ.get("HEADD_LOCOMO"))
    parser.add_argument("--scifact", type=Path, default=os.environ.get("HEADD_SCIFACT"))
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(
            os.environ.get("HEADD_QUALITY_CACHE") or Path(tempfile.gettempdir()) / "headd-quality"
        ),
    )
    parser.add_argument("--embedder", default="auto", help="auto, hash, off, or a local model name")
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    parser.add_argument("--datasets", default="locomo-turn,locomo-session,scifact")
    parser.add_argument("--markdown", action="store_true", help="also print the tables to stderr")
    parser.add_argument(
        "--holdout", action="store_true", help="check the tuned constants on held-out parts"
    )
    parser.add_argument(
        "--cost",
        type=int,
        metavar="N",
        help="CPU per query of the conversation rules, the data set copied to N memories",
    )
    parser.add_argument(
        "--passages",
        nargs="?",
        const="pieces",
        choices=sorted(UNITS),
        help="the vector arm scores each memory by its best passage (max-sim), not by its "
        "vector; UNIT cuts the article (pieces, the default: 158 word pieces a passage)",
    )
    args = parser.parse_args(argv)
    global PASSAGES
    PASSAGES = args.passages
    if args.locomo is None and args.scifact is None:
        parser.error("give --locomo and/or --scifact (or $HEADD_LOCOMO / $HEADD_SCIFACT)")
    systems = [s for s in args.systems.split(",") if s]
    wanted = set(args.datasets.split(","))
    embedder = None
    if args.embedder != "off":
        embedder = DiskCachedEmbedder(make_bench_embedder(args.embedder), args.cache_dir)
    datasets: list[DataSet] = []
    if args.locomo is not None:
        datasets.extend(load_locomo(args.locomo))
    if args.scifact is not None:
        datasets.append(load_scifact(args.scifact))
    out: dict[str, Any] = {
        "embedder": None if embedder is None else embedder.space,
        "load_average": list(os.getloadavg()),
        "datasets": {},
    }
    with tempfile.TemporaryDirectory() as workdir:
        for dataset in datasets:
            if dataset.name not in wanted:
                continue
            started = time.perf_counter()
            if (args.holdout or args.cost) and embedder is None:
                parser.error("--holdout and --cost rank with the default: they need an embedder")
            if args.cost:
                out["datasets"][dataset.name] = rules_cost(dataset, embedder, args.cost)
                continue
            if args.holdout:
                result = holdout(dataset, embedder)
            else:
                result = run_dataset(dataset, embedder, systems, Path(workdir))
            result["wall_s"] = round(time.perf_counter() - started, 2)
            out["datasets"][dataset.name] = result
            if args.markdown:
                print(markdown(dataset.name, result), file=sys.stderr, flush=True)
    if embedder is not None:
        out["texts_embedded"] = embedder.embedded
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
