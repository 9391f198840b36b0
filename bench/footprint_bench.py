"""The daemon's footprint, measured from outside: memory, disk, READY and lexical search.

``python -m bench.footprint_bench [--n 10000] [--store DIR] [--searches 300] [--commits 5]``
builds (or reuses) a store of ``n`` memories (``bench.support.stores``, SciFact from ``HEADD_SCIFACT``),
then:

1. starts ``headd --embedder off`` once with no snapshot (``cold``), waits for its snapshot write
   and for the index update, and stops it;
2. starts it again (``warm``: READY from the persisted snapshot), and reads ``/proc/<pid>/status``
   (VmRSS, VmHWM) at READY, after ``--searches`` lexical searches over the socket (SciFact's
   queries, cycled) and after ``--commits`` session commits; the search round trips give p50/p99;
   ``status.memory`` (the daemon's own accounting) is kept beside;
3. sizes everything under ``.memhtml/headd/`` and the head snapshot, per memory;
4. unless ``--no-peer``, starts memhtml 0.15.1's MCP server (``memhtml serve mcp``, lexical) on the
   same store, runs the same searches through it and reads its RSS and peak the same way.

Prints one JSON object (with the load average at the start, and the goals judged).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from headd_client.sync_client import Client

from bench.daemon_bench import Daemon, cached_store, session_commits, wait_index_idle
from bench.peers.memhtml_mcp import McpServer, PeerMissing, mcp_search_latencies, memhtml_version
from bench.support.daemon_measure import Target, summary
from bench.support.stores import scifact_queries

#: The goals of the footprint table, by store size.
GOALS: dict[int, tuple[Target, ...]] = {
    10_000: (
        Target("rss_mb_after_commits", "MB", 150, True),
        Target("hwm_mb", "MB", 250, True),
        Target("state_kb_per_memory", "KB", 6, True),
        Target("snapshot_kb_per_memory", "KB", 2, True),
        Target("warm_ready_s", "s", 0.5, True),
    ),
    100_000: (
        Target("rss_mb_after_commits", "MB", 800, True),
        Target("hwm_mb", "MB", 1200, True),
        Target("state_kb_per_memory", "KB", 6, True),
        Target("snapshot_kb_per_memory", "KB", 2, True),
        Target("warm_ready_s", "s", 1.5, True),
        Target("search_p50_ms", "ms", 2, True),
    ),
}


def proc_memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a live process, in MB (``/proc/<pid>/status``)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def state_sizes(store: Path, n: int) -> dict[str, Any]:
    """Bytes under ``.memhtml/headd/`` (each top-level entry, and per memory)."""
    root = store / ".memhtml" / "headd"
    entries = {p.name: tree_bytes(p) if p.is_dir() else p.stat().st_size for p in root.iterdir()}
    snapshots = sorted((root / "snapshots").glob("*.snap"))
    snapshot = max((p.stat().st_size for p in snapshots), default=0)
    total = sum(entries.values())
    return {
        "entries_bytes": entries,
        "total_bytes": total,
        "state_kb_per_memory": round(total / 1024 / n, 2),
        "snapshots": len(snapshots),
        "snapshot_bytes": snapshot,
        "snapshot_kb_per_memory": round(snapshot / 1024 / n, 2),
    }


def searches(sock: Path, queries: list[str], count: int) -> list[float]:
    """``count`` lexical searches (queries cycled), round trips in ms."""
    out: list[float] = []
    with Client(sock) as client:
        for query in itertools.islice(itertools.cycle(queries), count):
            started = time.perf_counter()
            client.call("search", query=query, limit=10)
            out.append((time.perf_counter() - started) * 1000)
    return out


def status_of(sock: Path) -> dict[str, Any]:
    with Client(sock) as client:
        status = client.call("status", {"memory": True})
    assert isinstance(status, dict)
    return status


def wait_snapshot(daemon: Daemon, timeout: float = 1800) -> dict[str, Any]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        status = status_of(daemon.sock)
        snap = status.get("snapshot") or {}
        if snap.get("last_sha") == status["sha"] and not snap.get("writing"):
            return dict(snap)
        if daemon.proc.poll() is not None:
            raise SystemExit(daemon.log_path.read_text())
        time.sleep(0.2)
    raise RuntimeError("the snapshot was not written")


def cold_start(store: Path, work: Path) -> dict[str, Any]:
    shutil.rmtree(store / ".memhtml" / "headd" / "snapshots", ignore_errors=True)
    daemon = Daemon(store, work)
    try:
        ready_s = daemon.ready_s
        snap = wait_snapshot(daemon)
        wait_index_idle(daemon.sock)
        memory = proc_memory_mb(daemon.proc.pid)
    finally:
        daemon.stop()
    return {"ready_s": round(ready_s, 3), "snapshot": snap, **memory}


def warm_start(store: Path, work: Path, queries: list[str], n_search: int, commits: int) -> dict:
    daemon = Daemon(store, work)
    pid = daemon.proc.pid
    try:
        out: dict[str, Any] = {"ready_s": round(daemon.ready_s, 3)}
        out["load_source"] = status_of(daemon.sock)["load_source"]
        out["at_ready"] = proc_memory_mb(pid)
        wait_index_idle(daemon.sock)
        out["after_index_update"] = proc_memory_mb(pid)
        latencies = searches(daemon.sock, queries, n_search)
        out["search_ms"] = summary(latencies)
        out["after_searches"] = proc_memory_mb(pid)
        session_commits(daemon.sock, commits)
        wait_index_idle(daemon.sock)
        time.sleep(1.0)  # the follower's advance and the plane's update settle
        out["after_commits"] = proc_memory_mb(pid)
        out["status_memory"] = status_of(daemon.sock).get("memory")
        wait_snapshot(daemon)
        out["after_snapshot_write"] = proc_memory_mb(pid)
    finally:
        daemon.stop()
    return out


def peer(store: Path, queries: list[str], n_search: int) -> dict[str, Any]:
    """memhtml's MCP server on the same store: RSS after its handshake, after the searches."""
    memory: dict[str, Any] = {}

    def probe(server: McpServer, moment: str) -> None:
        memory[moment] = proc_memory_mb(server.proc.pid)

    batch = list(itertools.islice(itertools.cycle(queries), n_search))
    try:
        answer = mcp_search_latencies(store, batch, probe=probe)
    except PeerMissing as exc:
        return {"skipped": str(exc)}
    return {
        "version": memhtml_version(),
        "handshake_s": answer["handshake_s"],
        "search_ms": summary(answer["latencies_ms"]),
        **memory,
    }


def judge(n: int, warm: dict[str, Any], disk: dict[str, Any]) -> dict[str, Any]:
    values = {
        "rss_mb_after_commits": warm["after_commits"]["VmRSS"],
        "hwm_mb": warm["after_commits"]["VmHWM"],
        "state_kb_per_memory": disk["state_kb_per_memory"],
        "snapshot_kb_per_memory": disk["snapshot_kb_per_memory"],
        "warm_ready_s": warm["ready_s"],
        "search_p50_ms": warm["search_ms"]["p50"],
    }
    goals = GOALS.get(n, ())
    return {goal.name: goal.judge(values[goal.name]) for goal in goals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="memories in the store")
    parser.add_argument("--store", type=Path, help="reuse this store (else a cached one)")
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument("--no-peer", action="store_true", help="skip memhtml's MCP server")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    store = args.store if args.store is not None else cached_store(args.n)
    queries = [text for _qid, text in scifact_queries()]
    result: dict[str, Any] = {
        "n": args.n,
        "store": str(store),
        "loadavg": [round(x, 2) for x in load],
    }
    with tempfile.TemporaryDirectory(prefix="headd-footprint-") as tmp:
        work = Path(tmp)
        (work / "cold").mkdir()
        (work / "warm").mkdir()
        # A copy per run: the session commits would otherwise meet the last run's memories.
        copy = work / "store"
        shutil.copytree(store, copy, symlinks=True, ignore=shutil.ignore_patterns("headd"))
        result["cold"] = cold_start(copy, work / "cold")
        result["warm"] = warm_start(copy, work / "warm", queries, args.searches, args.commits)
        result["disk"] = state_sizes(copy, args.n)
        result["goals"] = judge(args.n, result["warm"], result["disk"])
        if not args.no_peer:
            result["memhtml_mcp"] = peer(copy, queries, args.searches)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
