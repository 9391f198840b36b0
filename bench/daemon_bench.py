"""The daemon over its socket beside memhtml 0.15.1's MCP server, and the SQLite plane's index.

``python -m bench.daemon_bench [--n 10000] [--queries 300]`` on a store of ``n`` memories
(``bench.support.stores.build_store(checkout=True)``, cached pristine under
``headd-daemon-bench/n<N>/pristine`` in the bench cache and copied for each run, since the run commits to it):

1. memhtml 0.15.1 (``bash bench/peers/peers.sh``; ``MEMHTML_EMBED=off MEMHTML_LLM=off``):
   ``memhtml index rebuild``; one-file commit; ``memhtml index update``; then its long-lived
   ``memhtml serve mcp`` answering the SciFact train queries through its search tool.
2. ``headctl --store S index rebuild`` and, after another one-file commit, ``index update``
   (no daemon: headctl's own process), wall time of the command and the plane's own ms.
3. the real ``headd --embedder off`` (lexical, as memhtml runs with embeddings off): spawn to
   ``READY=1`` on a NOTIFY_SOCKET datagram socket of ours; search with one client and with 16
   clients on 16 connections (threads); a one-put session (open + apply + commit, and commit
   alone); an external pygit2 commit → ``status.sha`` shows it (a client polling every 2 ms)
   and the follower's "advanced" log line.

Prints one JSON document: every figure, its target, pass/fail, the ratios, and ``uptime``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2
from headd_client.sync_client import Client

from bench.peers.memhtml_mcp import PeerMissing
from bench.support.daemon_measure import percentile, ratio, summary, verdicts
from bench.support.data import cache_dir
from bench.support.stores import build_store, render, scifact_queries
from bench.support.threads import timed_threads

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = cache_dir("headd-daemon-bench")
HEADCTL = Path(sys.executable).parent / "headctl"
_ADVANCED = re.compile(r"^(\S+ \S+) headd\[\d+\] INFO headd\.daemon\.follow: advanced ")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def cached_store(n: int, cache: Path = DEFAULT_CACHE) -> Path:
    """The pristine store of ``n`` memories with its work tree, built once per machine."""
    pristine = cache / f"n{n}" / "pristine"
    done = pristine.parent / "built"
    if not done.exists():
        shutil.rmtree(pristine.parent, ignore_errors=True)
        pristine.parent.mkdir(parents=True)
        log(f"building the {n}-memory store once into {pristine}")
        build_store(pristine, n, checkout=True)
        done.write_text("ok\n")
    return pristine


def refresh_stat_cache(store: Path) -> None:
    """``git update-index --refresh`` on a fresh copy of the store.

    A copy has new inodes and ctimes, and the checkout wrote files and index in the same second
    (every entry "racily clean"), so until the index's stat data is refreshed every
    ``repository.status()`` re-reads and hashes every file: 180 ms on 300 files instead of 2 ms.
    A store a person uses has had ``git status`` refresh it; both peers' dirty scans (ours and
    memhtml's) are measured on a refreshed index.
    """
    subprocess.run(["git", "-C", str(store), "update-index", "-q", "--refresh"], check=False)


def commit_file(store: Path, path: str, text: str, message: str) -> tuple[str, float]:
    """Write ``path`` in the work tree and commit it on main (index and ref), as ``git commit``
    would; (sha, wall clock of the ref move)."""
    repo = pygit2.Repository(str(store))
    (store / path).parent.mkdir(parents=True, exist_ok=True)
    (store / path).write_text(text, encoding="utf-8")
    index = repo.index
    index.read()
    index.add(path)
    index.write()
    tree = index.write_tree()
    parent = repo.revparse_single("refs/heads/main")
    sig = pygit2.Signature("bench", "bench@headd.local")
    sha = repo.create_commit(None, sig, sig, message, tree, [parent.id])
    moved_at = time.time()
    repo.references["refs/heads/main"].set_target(sha)
    return str(sha), moved_at


def bench_memory(k: int, word: str) -> str:
    return render(
        f"Bench note {k}",
        f"Benchmark note {k} mentions {word}.",
        f"Written by the daemon benchmark, step {k}.",
        created="2026-11-30T00:00:00Z",
    )


# ---- memhtml -------------------------------------------------------------------------------


def memhtml_figures(store: Path, queries: Sequence[str]) -> dict[str, Any]:
    from bench.peers import memhtml_mcp as mcp_peer

    mcp_peer.memhtml_command()  # PeerMissing before anything is timed
    out: dict[str, Any] = {"version": mcp_peer.memhtml_version()}
    log("memhtml index rebuild")
    out["index_rebuild_s"], _ = mcp_peer.run_memhtml(store, ["index", "rebuild"])
    commit_file(store, "areas/bench/memhtml-update.html", bench_memory(1, "zebra"), "bench: one")
    log("memhtml index update")
    out["index_update_s"], upd = mcp_peer.run_memhtml(store, ["index", "update"])
    out["index_update_output"] = upd.strip()[-300:]
    log("memhtml serve mcp: searches")
    mcp = mcp_peer.mcp_search_latencies(store, queries)
    out["mcp"] = {k: v for k, v in mcp.items() if k != "latencies_ms"}
    out["mcp"]["search_ms"] = summary(mcp["latencies_ms"])
    return out


# ---- headctl index (no daemon) -------------------------------------------------------------


def headctl_index(store: Path, command: str) -> dict[str, Any]:
    start = time.perf_counter()
    done = subprocess.run(
        [str(HEADCTL), "--store", str(store), "--json", "index", command],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"headctl index {command}: {done.stderr}")
    report = json.loads(done.stdout)
    return {"wall_s": round(wall, 3), "report": report}


def plane_updates_in_process(store: Path, times: int) -> dict[str, Any]:
    """The plane's own ``index.update`` after a one-file commit, timed around the call alone
    (open excluded), as the daemon's writer thread runs it: ``times`` commits, one update each,
    with the daemon's work-tree watch (its first update, a full status scan, not timed)."""
    from headd_plane import calls as plane_calls
    from headd_plane.plane import open_plane

    t0 = time.perf_counter()
    plane = open_plane(store)
    open_ms = (time.perf_counter() - t0) * 1000
    took: list[float] = []
    try:
        plane_calls.watch_work_tree(plane)
        plane_calls.index_update(plane)
        for k in range(times):
            commit_file(
                store, f"areas/bench/plane{k:03d}.html", bench_memory(300 + k, "ibex"), "bench"
            )
            t1 = time.perf_counter()
            report = plane_calls.index_update(plane)
            took.append((time.perf_counter() - t1) * 1000)
            if report.unchanged:
                raise RuntimeError(f"update saw no change: {report}")
    finally:
        plane_calls.unwatch_work_tree(plane)
        plane.close()
    return {"open_ms": round(open_ms, 2), "update_ms": took}


def headctl_noop_s() -> float:
    """headctl's own start-up (``--help``): the part of its wall time that is not the plane."""
    start = time.perf_counter()
    subprocess.run([str(HEADCTL), "--help"], capture_output=True, timeout=60, check=True)
    return time.perf_counter() - start


# ---- the daemon ----------------------------------------------------------------------------


class Daemon:
    """``headd --embedder off`` (or ``embedder``) on ``store``; ``ready_s`` is spawn → READY=1 on
    our socket."""

    def __init__(self, store: Path, work: Path, embedder: str = "off") -> None:
        self.sock = work / "head.sock"
        self.log_path = work / "headd.log"
        notify_path = work / "notify.sock"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(notify_path))
        self.notify.settimeout(600)
        env = dict(os.environ, NOTIFY_SOCKET=str(notify_path))
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        spawned = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "headd.daemon.main", "--store", str(store)]
            + ["--socket", str(self.sock), "--embedder", embedder],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=str(REPO),
            env=env,
        )
        self.statuses: list[str] = []
        while True:
            try:
                datagram = self.notify.recv(4096).decode()
            except TimeoutError:
                raise SystemExit(self.log_path.read_text()) from None
            if datagram.split("\n")[0] == "READY=1":
                self.ready_s = time.perf_counter() - spawned
                break
            self.statuses.append(datagram)

    def stop(self, timeout: float = 60) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout)
        self._log.close()
        self.notify.close()


def wait_index_idle(sock: Path, timeout: float = 900) -> dict[str, Any]:
    """The daemon updates index.db once after its load; searches are measured after it."""
    deadline = time.time() + timeout
    with Client(sock) as c:
        while time.time() < deadline:
            st = c.call("status")
            index = st.get("index") or {}
            if not index.get("updating") and index.get("updates", 1) >= 1:
                return dict(st)
            time.sleep(0.2)
    raise RuntimeError("the daemon's index update did not finish")


def search_one_client(sock: Path, queries: Sequence[str]) -> tuple[list[float], list[float]]:
    rtt: list[float] = []
    took: list[float] = []
    with Client(sock) as c:
        for q in queries[:20]:
            c.call("search", query=q, limit=10)
        for q in queries:
            start = time.perf_counter()
            result = c.call("search", query=q, limit=10)
            rtt.append((time.perf_counter() - start) * 1000)
            took.append(float(result["took_ms"]))
    return rtt, took


def search_many_clients(
    sock: Path, queries: Sequence[str], clients: int, rounds: int
) -> tuple[list[float], float]:
    """``clients`` threads, one connection each, each searching its share of ``queries`` ×
    ``rounds``; (every round trip in ms, searches per second over the whole run)."""
    work = list(queries) * rounds
    shares = [work[i::clients] for i in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]

    def worker(i: int, barrier: threading.Barrier) -> None:
        with Client(sock) as c:
            c.call("status")
            barrier.wait()
            for q in shares[i]:
                t0 = time.perf_counter()
                c.call("search", query=q, limit=10)
                latencies[i].append((time.perf_counter() - t0) * 1000)

    wall = timed_threads(clients, worker)
    flat = [x for per in latencies for x in per]
    return flat, len(flat) / wall


def process_cpu_s(pid: int) -> float:
    """A process's user + system CPU seconds so far (``/proc``; 0.0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_commits(sock: Path, times: int, pid: int | None = None) -> dict[str, list[float]]:
    """One put per session: (open + apply + commit), each step alone, in ms; and, given the
    daemon's ``pid``, the daemon's CPU per session (every thread: the commit, the follower's
    advance, the index update the commits cause)."""
    whole: list[float] = []
    steps: dict[str, list[float]] = {"open_ms": [], "apply_ms": [], "commit_ms": []}
    cpu_before = process_cpu_s(pid) if pid is not None else 0.0
    with Client(sock) as c:
        for k in range(times):
            t0 = time.perf_counter()
            sid = c.call("session.open")["session"]
            t_open = time.perf_counter()
            put = {"op": "put", "path": f"areas/bench/s{k:03d}.html"}
            put["html"] = bench_memory(100 + k, "walrus")
            applied = c.call("session.apply", session=sid, ops=[put])
            if applied.get("violations"):
                raise RuntimeError(f"apply refused: {applied['violations']}")
            t1 = time.perf_counter()
            result = c.call("session.commit", session=sid, message=f"bench: session {k}")
            t2 = time.perf_counter()
            if result["outcome"] != "committed":
                raise RuntimeError(f"session commit: {result}")
            whole.append((t2 - t0) * 1000)
            steps["open_ms"].append((t_open - t0) * 1000)
            steps["apply_ms"].append((t1 - t_open) * 1000)
            steps["commit_ms"].append((t2 - t1) * 1000)
    out = {"open_apply_commit_ms": whole, **steps}
    if pid is not None:
        out["daemon_cpu_ms_per_session"] = [
            (process_cpu_s(pid) - cpu_before) * 1000 / max(1, times)
        ]
    return out


def pickups(store: Path, sock: Path, log_path: Path, times: int) -> dict[str, Any]:
    """An external commit → ``status.sha`` shows it (poll every 2 ms) and the log's line."""
    polled: list[float] = []
    logged: list[float] = []
    advance_ms: list[float] = []
    by: list[str] = []
    with Client(sock) as c:
        for k in range(times):
            time.sleep(0.3)  # let the background poll settle between runs
            marker = sum(1 for ln in log_path.read_text().splitlines() if _ADVANCED.match(ln))
            path = f"areas/bench/pickup{k:03d}.html"
            sha, moved_at = commit_file(store, path, bench_memory(200 + k, "okapi"), "bench: ext")
            deadline = moved_at + 10
            while True:
                st = c.call("status")
                if st["sha"] == sha:
                    polled.append((time.time() - moved_at) * 1000)
                    advance_ms.append(float(st["last_advance_ms"]))
                    by.append(str(st.get("last_advance_by")))
                    break
                if time.time() > deadline:
                    raise RuntimeError(f"status never showed {sha}")
                time.sleep(0.002)
            for _ in range(200):
                lines = [ln for ln in log_path.read_text().splitlines() if _ADVANCED.match(ln)]
                if len(lines) > marker:
                    m = _ADVANCED.match(lines[marker])
                    assert m is not None
                    when = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                    logged.append(max(0.0, (when - moved_at) * 1000))
                    break
                time.sleep(0.01)
    return {"status_poll_ms": polled, "log_ms": logged, "advance_ms": advance_ms, "by": by}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="query list passes with 16 clients")
    parser.add_argument("--repeat", type=int, default=10, help="session commits and pickups")
    parser.add_argument("--skip-memhtml", action="store_true")
    parser.add_argument(
        "--daemon-only",
        action="store_true",
        help="only the daemon's figures (no memhtml, no headctl index runs)",
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="pristine stores")
    parser.add_argument("--keep", action="store_true", help="keep the run's store copy")
    args = parser.parse_args(argv)

    load_start = uptime()
    pristine = cached_store(args.n, args.cache)
    work = Path(tempfile.mkdtemp(prefix="hdsb-", dir="/tmp"))
    store = work / "store"
    log(f"copying the store to {store}")
    shutil.copytree(pristine, store, symlinks=True)
    refresh_stat_cache(store)
    queries = [text for _, text in scifact_queries()][: args.queries]
    out: dict[str, Any] = {"n": args.n, "queries": len(queries), "uptime_start": load_start}
    figures: dict[str, float | None] = {}
    try:
        if args.skip_memhtml or args.daemon_only:
            out["memhtml_skipped"] = "--daemon-only" if args.daemon_only else "--skip-memhtml"
        else:
            try:
                out["memhtml"] = memhtml_figures(store, queries)
            except PeerMissing as missing:
                out["memhtml_skipped"] = str(missing)

        ours_rebuild: dict[str, Any] | None = None
        ours_update: dict[str, Any] | None = None
        if args.daemon_only:
            out["headctl_index_skipped"] = "--daemon-only (the daemon builds index.db at start)"
        else:
            log("headctl index rebuild / update")
            out["headctl_startup_s"] = round(headctl_noop_s(), 3)
            ours_rebuild = headctl_index(store, "rebuild")
            commit_file(
                store, "areas/bench/headd-update.html", bench_memory(2, "yak"), "bench: two"
            )
            ours_update = headctl_index(store, "update")
            in_process = plane_updates_in_process(store, args.repeat)
            out["headctl_index"] = {"rebuild": ours_rebuild, "update": ours_update}
            out["plane_update_in_process"] = {
                "open_ms": in_process["open_ms"],
                "update_ms": summary(in_process["update_ms"]),
            }
            figures["index_update_ms"] = percentile(in_process["update_ms"], 0.5)

        log("starting headd --embedder off")
        daemon = Daemon(store, work)
        try:
            out["daemon_ready_s"] = round(daemon.ready_s, 3)
            st = wait_index_idle(daemon.sock)
            out["daemon_status"] = {k: st.get(k) for k in ("records", "load_ms", "embedder")}
            log("search, 1 client")
            rtt, took = search_one_client(daemon.sock, queries)
            log(f"search, {args.clients} clients")
            many, qps = search_many_clients(daemon.sock, queries, args.clients, args.rounds)
            log("session commits")
            commits = session_commits(daemon.sock, args.repeat, daemon.proc.pid)
            log("external commit pickups")
            picked = pickups(store, daemon.sock, daemon.log_path, args.repeat)
            final_index = wait_index_idle(daemon.sock).get("index")
        finally:
            daemon.stop()
        out["daemon_index_after_pickups"] = final_index
        out["search_1_client_ms"] = summary(rtt)
        out["search_1_client_in_daemon_took_ms"] = summary(took)
        out[f"search_{args.clients}_clients_ms"] = summary(many)
        out[f"searches_per_s_{args.clients}_clients"] = round(qps, 1)
        cpu = commits.pop("daemon_cpu_ms_per_session", None)
        out["session"] = {k: summary(v) for k, v in commits.items()}
        out["session"]["daemon_cpu_ms_per_session"] = round(cpu[0], 1) if cpu else None
        out["pickup"] = {
            "status_poll_ms": summary(picked["status_poll_ms"]),
            "log_ms": summary(picked["log_ms"]) if picked["log_ms"] else None,
            "advance_ms": summary(picked["advance_ms"]),
            "advanced_by": picked["by"],
        }
        figures["search_p50_1_client"] = percentile(rtt, 0.5)
        figures["searches_per_s_16_clients"] = qps
        figures["session_commit_ms"] = percentile(commits["commit_ms"], 0.5)
        figures["pickup_ms"] = percentile(picked["status_poll_ms"], 0.5)
        if "memhtml" in out and ours_rebuild is not None and ours_update is not None:
            mh = out["memhtml"]
            figures["speedup_vs_memhtml_mcp_search_p50"] = ratio(
                mh["mcp"]["search_ms"]["p50"], figures["search_p50_1_client"]
            )
            figures["index_rebuild_speedup_vs_memhtml"] = ratio(
                mh["index_rebuild_s"], ours_rebuild["wall_s"]
            )
            out["ratios"] = {
                "mcp_search_p50": figures["speedup_vs_memhtml_mcp_search_p50"],
                "mcp_search_p99": ratio(mh["mcp"]["search_ms"]["p99"], percentile(rtt, 0.99)),
                "index_rebuild_wall": figures["index_rebuild_speedup_vs_memhtml"],
                "index_update_wall": ratio(mh["index_update_s"], ours_update["wall_s"]),
            }
        out["targets"] = verdicts(figures)
        out["uptime_end"] = uptime()
        print(json.dumps(out, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
