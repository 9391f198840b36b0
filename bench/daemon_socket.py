"""Daemon figures through the socket: cold start, search round trips, advance and pickup.

``python -m bench.daemon_socket [--n 10000] [--queries 300]`` builds a store of ``n`` memories
(``bench.stores``: the SciFact abstracts topped up with generated notes), starts the real ``headd``
on it (``--embedder off``), then measures:

- cold start: wall time from spawn to the first answer, and the daemon's own ``load_ms``;
- search through the socket with the sync client (one connection, SciFact train queries,
  limit 10): round-trip p50/p95 and the daemon's in-process ``took_ms``;
- the same queries from 8 asyncio tasks sharing one connection (throughput);
- an external commit of one changed file: the background follower's pickup (commit to the
  daemon's "advanced" log line) and the advance's own ms.

Prints one JSON object. Compare with memhtml's head server (design brief): 52/123 ms search p50/p95
through its socket, 51-102 ms advance, 119-971 ms poll pickup.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pygit2
from headd_client.async_client import AsyncClient
from headd_client.sync_client import Client

from bench.stores import build_store, scifact_queries

REPO = Path(__file__).resolve().parents[1]
_ADVANCED = re.compile(r"^(\S+ \S+) headd\[\d+\] INFO headd\.daemon\.follow: advanced ")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def commit_one_change(store: Path) -> tuple[str, float]:
    """Rewrite one memory's body through pygit2 onto main; (sha, wall time of the ref move)."""
    repo = pygit2.Repository(str(store))
    parent = repo.revparse_single("refs/heads/main")
    tree = parent.peel(pygit2.Tree)
    index = pygit2.Index()
    index.read_tree(tree)
    path = next(e.path for e in index if e.path.endswith(".html"))
    text = bytes(repo[index[path].id].read_raw()).decode()
    changed = text.replace("</p>", " Edited for the benchmark.</p>", 1)
    index.add(pygit2.IndexEntry(path, repo.create_blob(changed.encode()), pygit2.GIT_FILEMODE_BLOB))
    new_tree = index.write_tree(repo)
    sig = pygit2.Signature("bench", "bench@headd.local")
    sha = repo.create_commit(None, sig, sig, "bench edit", new_tree, [parent.id])
    moved_at = time.time()
    repo.references["refs/heads/main"].set_target(sha)
    return str(sha), moved_at


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="hdb-", dir="/tmp"))
    store = work / "store"
    t0 = time.perf_counter()
    build_store(store, args.n)
    build_s = time.perf_counter() - t0
    sock = work / "head.sock"
    log_path = work / "headd.log"
    spawned = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "headd.daemon.main",
                "--store",
                str(store),
                "--socket",
                str(sock),
            ]
            + ["--embedder", "off"],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(REPO),
        )
    try:
        while True:
            try:
                with Client(sock, timeout=120) as c:
                    status = c.call("status")
                break
            except Exception:
                if proc.poll() is not None:
                    raise SystemExit(log_path.read_text()) from None
                time.sleep(0.02)
        ready_s = time.perf_counter() - spawned

        queries = [text for _, text in scifact_queries()][: args.queries]
        rtt: list[float] = []
        took: list[float] = []
        with Client(sock) as c:
            for q in queries[:20]:  # warm up
                c.call("search", query=q, limit=10)
            for q in queries:
                start = time.perf_counter()
                result = c.call("search", query=q, limit=10)
                rtt.append((time.perf_counter() - start) * 1000)
                took.append(result["took_ms"])

        async def concurrent() -> float:
            async with AsyncClient(sock) as ac:
                start = time.perf_counter()
                chunks = [queries[i::8] for i in range(8)]

                async def worker(chunk: list[str]) -> None:
                    for q in chunk:
                        await ac.call("search", query=q, limit=10)

                await asyncio.gather(*(worker(chunk) for chunk in chunks))
                return len(queries) / (time.perf_counter() - start)

        qps = asyncio.run(concurrent())

        pickups: list[float] = []
        advance_ms: list[float] = []
        for _ in range(5):
            marker = log_path.read_text().count("advanced ")
            sha, moved_at = commit_one_change(store)
            deadline = time.time() + 10
            while time.time() < deadline:
                lines = [ln for ln in log_path.read_text().splitlines() if _ADVANCED.match(ln)]
                if len(lines) > marker:
                    stamp = _ADVANCED.match(lines[-1]).group(1)  # type: ignore[union-attr]
                    when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
                    pickups.append(max(0.0, (when - moved_at) * 1000))
                    break
                time.sleep(0.005)
            with Client(sock) as c:
                st = c.call("status")
            assert st["sha"] == sha, "the daemon answers at the new commit"
            advance_ms.append(st["last_advance_ms"])
            time.sleep(0.1)

        report = {
            "records": status["records"],
            "store_build_s": round(build_s, 2),
            "cold_start_to_first_answer_s": round(ready_s, 2),
            "load_ms": status["load_ms"],
            "search_rtt_ms": {
                "p50": round(percentile(rtt, 0.5), 2),
                "p95": round(percentile(rtt, 0.95), 2),
                "mean": round(statistics.fmean(rtt), 2),
            },
            "search_in_daemon_ms": {
                "p50": round(percentile(took, 0.5), 2),
                "p95": round(percentile(took, 0.95), 2),
            },
            "search_qps_8_tasks_one_connection": round(qps, 1),
            "background_pickup_ms": [round(p, 1) for p in pickups],
            "advance_ms": advance_ms,
            "load_avg": os.getloadavg(),
        }
        print(json.dumps(report, indent=2))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
