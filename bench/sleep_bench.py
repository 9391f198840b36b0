"""The sleep benchmark: a run's deterministic phases at 1,000 and 10,000 memories, and search
latency beside a run against idle.

``python -m bench.sleep_bench [--sizes 1000,10000] [--out FILE]`` prints one JSON document. For
each size it writes a store of generated memories with what sleep curates (half the memories in
the inbox sharing entities, exact duplicates, memories past valid-until, stale thin ones, dangling
links) in one commit, then measures:

- ``load``: the version a run starts from (``load_head``; the daemon's follower already holds it);
- ``run``: ``start_run`` over that version, every deterministic phase, one commit each;
- ``search``: ``search_head`` p50/p99 over 200 title queries idle, then while a run goes on in a
  background thread at lowered priority (the daemon's sleep worker), and their ratio.

- ``peer``: with ``--peer-size N`` and memhtml 0.15.1 installed (``bash bench/peers/peers.sh``),
  ``memhtml sleep run`` on a store of N of the same memories (``MEMHTML_LLM=off
  MEMHTML_EMBED=off``, after its ``index rebuild``, which is timed apart), and our run on the same
  store in the same process run, with their ratios. The peer's store has no exact duplicates:
  memhtml's index refuses two files with one content hash (its write path never makes them).

Targets (docs/benchmarks.md): the run under 60 s at 10,000 memories; search beside a run within
2x of idle (p50).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pygit2

from bench.support.head_measure import latency_summary, load_average, timed
from headd.head.search import search_head
from headd.head.version import load_head
from headd.memfile.head_edit import add_link, set_meta
from headd.memfile.render import fields_from_write, render_memory
from headd.sleep.run import start_run
from headd.thread_priority import lower_thread_priority

RUN_DAY = date(2026, 12, 4)
RUN_TARGET_S = 60.0
SEARCH_RATIO_TARGET = 2.0
WORDS = [
    "pool",
    "cache",
    "ledger",
    "billing",
    "shard",
    "replica",
    "queue",
    "worker",
    "deploy",
    "token",
    "schema",
    "index",
    "vector",
    "gateway",
    "proxy",
    "cluster",
    "region",
    "backup",
    "snapshot",
    "quota",
    "latency",
    "budget",
    "alert",
    "rotation",
    "runbook",
    "invoice",
    "refund",
    "session",
    "cookie",
    "header",
    "payload",
    "tenant",
    "account",
    "audit",
    "policy",
    "secret",
]


def _memory(
    title: str,
    claim: str,
    *,
    created: str,
    metas: dict[str, str],
    entities: list[str],
    links: list[str],
) -> str:
    """One memory file as the writer renders it, then the run's metas and links spliced in."""
    fields = fields_from_write(
        title=title,
        memory_type="semantic",
        now=datetime.fromisoformat(created.replace("Z", "+00:00")),
        claim=claim,
        body=claim.lower(),
        entities=entities,
    )
    html = render_memory(fields)
    for name, value in metas.items():
        html = set_meta(html, name, value)
    for href in links:
        html = add_link(html, "relates_to", href)
    return html


def corpus(count: int, seed: int = 7, *, duplicates: bool = True) -> dict[str, str]:
    """``count`` memories: half in the inbox, 2% exact duplicates (unless ``duplicates`` is
    false), 2% past valid-until, 5% old and thin, 1% with a dangling link, entities shared in
    groups of about ten."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    previous = ""
    for i in range(count):
        words = rng.sample(WORDS, 5)
        title = f"{words[0].title()} {words[1]} {words[2]} {i}"
        claim = f"The {words[0]} {words[1]} uses {words[3]} {words[4]} number {i}."
        entity = f"service:{WORDS[(i // 10) % len(WORDS)]}-{i // 10}"
        metas: dict[str, str] = {}
        created = "2026-11-20T09:00:00Z"
        links: list[str] = []
        roll = i % 100
        if roll < 2 and previous and duplicates:
            claim = previous
        if 2 <= roll < 4:
            metas["memhtml-valid-until"] = "2026-11-01"
        if 4 <= roll < 9:
            created = "2024-06-01T09:00:00Z"
            claim = f"A {words[0]} existed {i}."
        if roll == 9:
            links.append(f"/resources/gone/missing-{i}.html")
        previous = claim
        directory = "areas/inbox" if i % 2 == 0 else f"resources/{WORDS[i % len(WORDS)]}"
        files[f"{directory}/memory-{i}.html"] = _memory(
            title, claim, created=created, metas=metas, entities=[entity], links=links
        )
    return files


def write_store(root: Path, files: dict[str, str]) -> tuple[pygit2.Repository, str]:
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.config["user.name"] = "Bench"
    repo.config["user.email"] = "bench@example.org"
    index = repo.index
    for path, text in files.items():
        blob = repo.create_blob(text.encode())
        index.add(pygit2.IndexEntry(path, blob, pygit2.GIT_FILEMODE_BLOB))
    tree = index.write_tree()
    who = pygit2.Signature("Bench", "bench@example.org")
    sha = repo.create_commit("refs/heads/main", who, who, "corpus", tree, [])
    return repo, str(sha)


def _search_latencies(view: Any, queries: list[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        search_head(view, query, limit=10)
        out.append(time.perf_counter() - started)
    return out


def measure(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sleep-bench-") as tmp:
        files = corpus(count)
        repo, sha = write_store(Path(tmp), files)
        version, load = timed(lambda: load_head(repo, sha))
        versions = {sha: version}

        def run_once() -> Any:
            return start_run(
                repo, day=RUN_DAY, versions=lambda s: versions.get(s) or load_head(repo, s)
            )

        report, run = timed(run_once)
        rng = random.Random(1)
        queries = [r.title for r in rng.sample(list(version.indexes.active), 200)]
        _search_latencies(version, queries[:20])  # warm the lexical caches
        idle = latency_summary(_search_latencies(version, queries))
        stop = threading.Event()

        def background() -> None:
            lower_thread_priority()
            while not stop.is_set():
                run_once()

        worker = threading.Thread(target=background, daemon=True)
        worker.start()
        samples: list[float] = []
        deadline = time.monotonic() + max(2.0, run.wall_s)
        while time.monotonic() < deadline or len(samples) < len(queries):
            samples += _search_latencies(version, queries[:50])
        beside = latency_summary(samples)
        stop.set()
        worker.join()
        committed = {p.phase: p.counts for p in report.phases if p.commit}
        ratio = beside["p50_ms"] / idle["p50_ms"] if idle["p50_ms"] else None
        mean_ratio = beside["mean_ms"] / idle["mean_ms"] if idle["mean_ms"] else None
        return {
            "memories": count,
            "load": {"wall_s": round(load.wall_s, 3), "cpu_s": round(load.cpu_s, 3)},
            "run": {
                "wall_s": round(run.wall_s, 3),
                "cpu_s": round(run.cpu_s, 3),
                "target_s": RUN_TARGET_S,
                "pass": run.wall_s < RUN_TARGET_S,
            },
            "phases": committed,
            "search_idle": idle,
            "search_beside_run": beside,
            "search_ratio_p50": None if ratio is None else round(ratio, 2),
            "search_ratio_mean": None if mean_ratio is None else round(mean_ratio, 2),
            "search_ratio_target": SEARCH_RATIO_TARGET,
            "search_pass": ratio is not None and ratio <= SEARCH_RATIO_TARGET,
            "load_average": load_average(),
        }


#: What ``memhtml init`` ignores: its two databases and their WAL files.
MEMHTML_GITIGNORE = (
    ".memhtml/index.db\n.memhtml/state.db\n.memhtml/index.db-*\n.memhtml/state.db-*\n"
)


def measure_peer(count: int) -> dict[str, Any]:
    """``memhtml sleep run`` and ours on one store of ``count`` memories, checked out."""
    from bench.peers.memhtml_mcp import memhtml_version, run_memhtml

    with tempfile.TemporaryDirectory(prefix="sleep-peer-") as tmp:
        root = Path(tmp)
        files = corpus(count, duplicates=False)
        files[".gitignore"] = MEMHTML_GITIGNORE
        repo, sha = write_store(root, files)
        repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
        _, rebuild = timed(lambda: run_memhtml(root, ["index", "rebuild"]))
        day = ["--date", RUN_DAY.isoformat()]
        (_, answer), peer = timed(lambda: run_memhtml(root, ["sleep", "run", *day]))
        data = json.loads(answer)["data"]
        report, ours = timed(
            lambda: start_run(repo, day=RUN_DAY, versions=lambda s: load_head(repo, s))
        )
        return {
            "memories": count,
            "memhtml": memhtml_version(),
            "memhtml_index_rebuild": {
                "wall_s": round(rebuild.wall_s, 3),
                "cpu_s": round(rebuild.cpu_s, 3),
            },
            "memhtml_run": {"wall_s": round(peer.wall_s, 3), "cpu_s": round(peer.cpu_s, 3)},
            "memhtml_phases": {p["phase"]: p["status"] for p in data["phases"]},
            "memhtml_commits": len(data.get("commits") or []),
            "headd_run": {"wall_s": round(ours.wall_s, 3), "cpu_s": round(ours.cpu_s, 3)},
            "headd_commits": sum(1 for p in report.phases if p.commit),
            "ratio_wall": round(peer.wall_s / ours.wall_s, 1) if ours.wall_s else None,
            "ratio_cpu": round(peer.cpu_s / ours.cpu_s, 1) if ours.cpu_s else None,
            "load_average": load_average(),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--peer-size", type=int, default=0, help="also memhtml's run at this size (0: none)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    document: dict[str, Any] = {"bench": "sleep", "sizes": [measure(size) for size in sizes]}
    if args.peer_size:
        document["peer"] = measure_peer(args.peer_size)
    text = json.dumps(document, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
