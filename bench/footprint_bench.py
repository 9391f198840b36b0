"""The daemon's footprint, measured from outside: memory, disk, READY and lexical search.

``python -m bench.footprint_bench [--n 10000] [--store DIR] [--state DIR] [--searches 300]
[--commits 5] [--repeat 3] [--embedder auto]`` builds (or reuses) a store of ``n`` memories
(``bench.support.stores``, SciFact from ``HEADD_SCIFACT``), copies it, then:

1. starts ``headd --embedder off`` once with no snapshot (``cold``), waits for its snapshot write
   and for the index update, and stops it; with ``--state DIR`` the ``.memhtml/headd/`` it left
   is kept in ``DIR``, and a later run that finds it there copies it in instead (at 100,000 the
   cold start costs minutes the other figures do not depend on);
2. starts it again (``warm``: READY from the persisted snapshot), and reads ``/proc/<pid>/status``
   (VmRSS, VmHWM) at READY, after ``--searches`` lexical searches over the socket (SciFact's
   queries, cycled), after ``--commits`` session commits and after the snapshot write they
   cause; the search round trips give p50/p99; ``status.memory`` (the daemon's own accounting)
   is kept beside;
   ``cold_use``: the same searches and commits on a fresh copy started from git (no snapshot,
   no ``.memhtml/headd/``), with the same readings (``--no-cold-use`` skips it);
3. sizes everything under ``.memhtml/headd/`` and the head snapshot, per memory;
4. ``--repeat`` more starts from the snapshot: READY's wall and CPU, the first search sent at
   READY, and their medians (the READY the goals judge);
5. with ``--embedder NAME``: the same start and searches with ``--embedder off`` and with
   ``NAME`` once its vectors are filled (or loaded from index.db, which ``--state`` keeps for
   the next run; ``--seed-vectors`` stores what a finished fill leaves instead of filling), and
   the model alone in a fresh interpreter: what the daemon adds for the vectors is the
   difference of the two, less the model;
6. unless ``--no-peer``, starts memhtml 0.15.1's MCP server (``memhtml serve mcp``, lexical) on the
   same store, runs the same searches through it and reads its RSS and peak the same way.

Prints one JSON object (with the load average at the start, and the goals judged).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from headd_client.sync_client import Client

from bench.daemon_bench import (
    Daemon,
    cached_store,
    process_cpu_s,
    session_commits,
    wait_index_idle,
)
from bench.peers.memhtml_mcp import McpServer, PeerMissing, mcp_search_latencies, memhtml_version
from bench.support.daemon_measure import Target, summary
from bench.support.stores import scifact_queries

#: The goals of the footprint table, by store size.
GOALS: dict[int, tuple[Target, ...]] = {
    10_000: (
        Target("rss_mb_after_commits", "MB", 150, True),
        Target("cold_rss_mb_after_commits", "MB", 150, True),
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


def cold_or_reused(store: Path, work: Path, state: Path | None) -> dict[str, Any]:
    """The cold start, or (``state`` holding a cold start's ``.memhtml/headd/``) that state
    copied in: at 100,000 the cold start (a git load, the snapshot write, the plane's first
    index of every file) costs minutes the warm figures do not depend on."""
    target = store / ".memhtml" / "headd"
    if state is not None and (state / "snapshots").is_dir():
        shutil.copytree(state, target, dirs_exist_ok=True)
        return {"reused": str(state)}
    cold = cold_start(store, work)
    if state is not None:
        shutil.rmtree(state, ignore_errors=True)
        shutil.copytree(target, state)
    return cold


def warm_start(store: Path, work: Path, queries: list[str], n_search: int, commits: int) -> dict:
    daemon = Daemon(store, work)
    pid = daemon.proc.pid
    try:
        out: dict[str, Any] = {
            "ready_s": round(daemon.ready_s, 3),
            "ready_cpu_s": round(process_cpu_s(pid), 3),
            "loadavg_at_ready": [round(x, 2) for x in os.getloadavg()],
        }
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


def ready_starts(store: Path, work: Path, count: int, query: str) -> dict[str, Any]:
    """``count`` more starts from the persisted snapshot, each stopped after one search sent the
    moment READY is seen: READY's wall time and the daemon's CPU by then, that first search's
    wall time (it pays whatever the start left for after READY), and the medians."""
    runs: list[dict[str, Any]] = []
    for number in range(count):
        started = work / f"start-{number}"
        started.mkdir()
        daemon = Daemon(store, started)
        try:
            cpu = process_cpu_s(daemon.proc.pid)
            begun = time.perf_counter()
            with Client(daemon.sock) as client:
                client.call("search", query=query, limit=10)
            first = time.perf_counter() - begun
            runs.append(
                {
                    "ready_s": round(daemon.ready_s, 3),
                    "ready_cpu_s": round(cpu, 3),
                    "first_search_s": round(first, 3),
                    "load_source": status_of(daemon.sock)["load_source"],
                    "loadavg": round(os.getloadavg()[0], 2),
                }
            )
        finally:
            daemon.stop()
    keys = ("ready_s", "ready_cpu_s", "first_search_s")
    medians = {key: statistics.median(run[key] for run in runs) for key in keys} if runs else {}
    return {"runs": runs, "median": medians}


def model_alone(embedder: str, store: Path) -> dict[str, Any]:
    """The model's own cost, in a fresh interpreter: VmRSS with numpy imported, then after the
    embedder is made, loaded and has embedded one text (what a daemon pays for the model before
    any vector of the store), in MB."""
    script = (
        "import json, os, sys, numpy\n"
        "from pathlib import Path\n"
        "from headd.embed.factory import make_embedder\n"
        "from headd.embed.quantize import model_cache_for_store\n"
        "def rss():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(('VmRSS', 'VmHWM')):\n"
        "            yield line.split(':')[0], round(int(line.split()[1]) / 1024, 1)\n"
        "before = dict(rss())\n"
        "e = make_embedder(sys.argv[1], model_cache=model_cache_for_store(Path(sys.argv[2]), os.environ))\n"
        "e.embed(['a first text to embed'])\n"
        "print(json.dumps({'before': before, 'after': dict(rss())}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, embedder, str(store)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    figures: dict[str, Any] = json.loads(done.stdout)
    figures["model_mb"] = round(figures["after"]["VmRSS"] - figures["before"]["VmRSS"], 1)
    return figures


def wait_vectors(daemon: Daemon, timeout: float) -> dict[str, Any]:
    """Poll ``status`` until the vectors cover the version and no fill runs (or ``timeout``)."""
    deadline = time.time() + timeout
    status = status_of(daemon.sock)
    while time.time() < deadline:
        status = status_of(daemon.sock)
        vectors, fill = status.get("vectors") or {}, status.get("vector_fill") or {}
        if vectors.get("coverage", 0.0) >= 1.0 and not fill.get("filling"):
            break
        if daemon.proc.poll() is not None:
            raise SystemExit(daemon.log_path.read_text())
        time.sleep(2.0)
    return {"vectors": status.get("vectors"), "vector_fill": status.get("vector_fill")}


def seed_vectors(store: Path, embedder: str) -> dict[str, Any]:
    """Store a unit vector of ``embedder``'s space for every vector key of every record (values
    drawn from a fixed seed) in ``head_vectors``, as a finished fill leaves it: the vectors'
    memory does not depend on their values, and a real fill of 10,000 memories takes 20-30
    minutes on this machine (``bench.vector_bench`` measures the fill)."""
    import numpy as np

    from headd.daemon.snapshot_store import SnapshotStore
    from headd.daemon.vectors import PlaneVectorStore
    from headd.embed.factory import make_embedder
    from headd.head.snapshot import decode_version
    from headd.head.vectors import VectorSpace, vector_keys_of

    made = make_embedder(embedder)
    if made is None:
        raise SystemExit(f"--embedder {embedder} makes no embedder here")
    space = VectorSpace.parse(made.space)
    entry = SnapshotStore(store).entries()[0]
    with SnapshotStore(store).mapped(entry.sha) as data:
        assert data is not None
        version = decode_version(data)
    keys = sorted({key for r in version.indexes.records.values() for key in vector_keys_of(r)})
    rng = np.random.default_rng(18)
    vectors = rng.standard_normal((len(keys), space.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    writer = PlaneVectorStore(store)
    for start in range(0, len(keys), 4096):
        writer.append(space, keys[start : start + 4096], vectors[start : start + 4096])
    return {"space": space.id, "keys": len(keys)}


def vectors_phase(
    store: Path,
    work: Path,
    embedder: str,
    queries: list[str],
    n_search: int,
    timeout: float,
    *,
    seed: bool,
) -> dict[str, Any]:
    """The vectors' cost: the same start and searches with ``--embedder off`` and with
    ``embedder`` (its vectors filled, or loaded from index.db when an earlier run filled them),
    RSS at the same moments, and the model's own cost measured alone; what the daemon adds for
    the vectors themselves is the difference less the model."""
    out: dict[str, Any] = {"embedder": embedder}
    if seed:
        out["seeded"] = seed_vectors(store, embedder)
    for name, setting in (("off", "off"), ("on", embedder)):
        place = work / f"vectors-{name}"
        place.mkdir()
        daemon = Daemon(store, place, embedder=setting)
        pid = daemon.proc.pid
        try:
            run: dict[str, Any] = {
                "ready_s": round(daemon.ready_s, 3),
                "at_ready": proc_memory_mb(pid),
            }
            wait_index_idle(daemon.sock)
            if setting != "off":
                begun = time.time()
                run.update(wait_vectors(daemon, timeout))
                run["fill_wait_s"] = round(time.time() - begun, 1)
            run["before_searches"] = proc_memory_mb(pid)
            run["search_ms"] = summary(searches(daemon.sock, queries, n_search))
            run["after_searches"] = proc_memory_mb(pid)
            run["status_memory"] = status_of(daemon.sock).get("memory")
        finally:
            daemon.stop(timeout=300)  # a fill in flight finishes its batch first
        out[name] = run
    out["model_alone"] = model_alone(embedder, store)
    model = out["model_alone"].get("model_mb")
    added = out["on"]["after_searches"]["VmRSS"] - out["off"]["after_searches"]["VmRSS"]
    out["embedder_adds_mb"] = round(added, 1)
    out["vectors_add_mb"] = None if model is None else round(added - model, 1)
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


def judge(
    n: int,
    warm: dict[str, Any],
    disk: dict[str, Any],
    ready: dict[str, Any] | None = None,
    cold_use: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The goals of ``n`` judged: the peak includes the snapshot write after the commits, READY
    is the median of the repeated starts when there were any; the resident size after the same
    use is judged after a load from git too (``cold_use``) when it was measured."""
    ready_s = warm["ready_s"]
    if ready and ready.get("median"):
        ready_s = ready["median"]["ready_s"]
    values = {
        "rss_mb_after_commits": warm["after_commits"]["VmRSS"],
        "cold_rss_mb_after_commits": (cold_use or warm)["after_commits"]["VmRSS"],
        "hwm_mb": warm["after_snapshot_write"]["VmHWM"],
        "state_kb_per_memory": disk["state_kb_per_memory"],
        "snapshot_kb_per_memory": disk["snapshot_kb_per_memory"],
        "warm_ready_s": ready_s,
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
    parser.add_argument(
        "--no-cold-use",
        action="store_true",
        help="skip the searches and commits after a load from git",
    )
    parser.add_argument(
        "--state",
        type=Path,
        help="keep .memhtml/headd/ after the cold start here, and reuse it (no cold start) when "
        "it is already there",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="more starts from the snapshot, for READY's median"
    )
    parser.add_argument(
        "--embedder",
        default="off",
        help="also measure the vectors' cost with this embedder (auto, a model name)",
    )
    parser.add_argument(
        "--fill-timeout", type=float, default=3600, help="seconds to wait for the vector fill"
    )
    parser.add_argument(
        "--seed-vectors",
        action="store_true",
        help="store the vectors a finished fill leaves (seeded values) instead of filling",
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()
    store = args.store if args.store is not None else cached_store(args.n)
    queries = [text for _qid, text in scifact_queries()]
    result: dict[str, Any] = {
        "n": args.n,
        "store": str(store),
        "loadavg": [round(x, 2) for x in load],
    }
    try:
        with tempfile.TemporaryDirectory(prefix="headd-footprint-") as tmp:
            measure(Path(tmp), store, args, queries, result)
    finally:  # what was measured is printed even when a later step fails
        json.dump(result, sys.stdout, indent=2)
        print()
    return 0


def measure(
    work: Path, store: Path, args: argparse.Namespace, queries: list[str], result: dict[str, Any]
) -> None:
    """Every step of the module docstring, each filling its key of ``result`` as it ends."""
    (work / "cold").mkdir()
    (work / "warm").mkdir()
    # A copy per run: the session commits would otherwise meet the last run's memories.
    copy = work / "store"
    shutil.copytree(store, copy, symlinks=True, ignore=shutil.ignore_patterns("headd"))
    result["cold"] = cold_or_reused(copy, work / "cold", args.state)
    result["warm"] = warm_start(copy, work / "warm", queries, args.searches, args.commits)
    if not args.no_cold_use:  # the same use after a load from git, on a copy of its own
        (work / "cold-use").mkdir()
        fresh = work / "store-cold"
        shutil.copytree(store, fresh, symlinks=True, ignore=shutil.ignore_patterns("headd"))
        result["cold_use"] = warm_start(
            fresh, work / "cold-use", queries, args.searches, args.commits
        )
        shutil.rmtree(fresh, ignore_errors=True)
    result["disk"] = state_sizes(copy, args.n)
    if args.repeat:
        result["ready"] = ready_starts(copy, work, args.repeat, queries[0])
    result["goals"] = judge(
        args.n, result["warm"], result["disk"], result.get("ready"), result.get("cold_use")
    )
    if args.embedder != "off":
        result["vectors"] = vectors_phase(
            copy,
            work,
            args.embedder,
            queries,
            args.searches,
            args.fill_timeout,
            seed=args.seed_vectors,
        )
        if args.state is not None:  # keep the filled vectors (head_vectors) for the next run
            for path in (copy / ".memhtml" / "headd").glob("index.db*"):
                shutil.copy2(path, args.state / path.name)
    if not args.no_peer:
        result["memhtml_mcp"] = peer(copy, queries, args.searches)


if __name__ == "__main__":
    raise SystemExit(main())
