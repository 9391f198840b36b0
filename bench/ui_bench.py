"""The console's pages at 10,000 memories: the server's own time for each page.

``python -m bench.ui_bench [--n 10000] [--requests 40] [--history 60]`` builds a store of ``n``
generated memories in one commit (``bench.support.stores``), then ``history`` commits that each
change one memory (so its History page and the Activity page walk a real history), kept in the
bench cache (``headd-ui-bench/n<N>-h<H>``) and reused, since the pages only read it; starts the
real ``headd --embedder off`` on it and the console (``ConsoleServer``, as ``headctl ui`` runs
it) in this process, signs in with the printed URL, and asks every page ``requests`` times over
one keep-alive connection: search, a memory, its history, the same memory as of an old commit
(time travel), activity and review. Each answer's ``Server-Timing`` header is the page's own
time (from the request reaching the console to the start of its answer) and the console's CPU
meanwhile; the daemon's CPU per request comes from /proc over each page's requests, and the wall
time of the round trip is reported beside them.

Prints one JSON document: per page the server time, the CPU (console + daemon) and the round
trip, and two verdicts against the goal of 50 ms per page: ``pass_wall`` (server-time p50, the
figure on a quiet machine) and ``pass_cpu`` (the CPU a page costs, the figure to read on a
loaded one).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pygit2
from headd_client.console.serve import ConsoleServer
from headd_client.sync_client import Client

from bench.support.daemon_measure import summary
from bench.support.data import cache_dir
from bench.support.serve import daemon_argv
from bench.support.stores import _vocabulary, generated_memories, render, write_tree

GOAL_MS = 50.0
#: Three words of the generated vocabulary, common enough to match hundreds of memories.
QUERY = " ".join(_vocabulary()[40:43])
_TIMING = re.compile(r"app;dur=([0-9.]+), cpu;dur=([0-9.]+)")
_TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def daemon_cpu_ms(pid: int) -> float:
    """The daemon process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_MS


def cached_store(n: int, history: int) -> tuple[Path, str, str]:
    """The bench's store, built once under the bench cache and reused (the pages only read it);
    its path, the revised memory's path and the first commit."""
    dest = cache_dir("headd-ui-bench") / f"n{n}-h{history}"
    done = dest / ".memhtml-ui-bench.json"
    if not done.exists():
        shutil.rmtree(dest, ignore_errors=True)
        path, first, _tip = build(dest, n, history)
        done.write_text(json.dumps({"path": path, "first": first}))
    found = json.loads(done.read_text())
    return dest, found["path"], found["first"]


def build(dest: Path, n: int, history: int) -> tuple[str, str, str]:
    """The store: ``n`` memories in one commit, then ``history`` commits to one of them; the
    memory's path, the first commit and the tip."""
    repo = pygit2.init_repository(str(dest), initial_head="main")
    files = {path: text.encode() for path, text in generated_memories(n)}
    files[".gitignore"] = b"/.memhtml/\n/.memhtml-ui-bench.json\n"
    sig = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600, 0)
    first = repo.create_commit(
        "refs/heads/main", sig, sig, "bench: memories", write_tree(repo, files), []
    )
    path = next(iter(files))
    tip = first
    for i in range(history):
        files[path] = render(
            f"Revised memory {i}", f"The revised claim number {i} holds.", f"Body {i}."
        ).encode()
        tree = write_tree(repo, files)
        sig = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600 + 60 * (i + 1), 0)
        message = f"memhtml(session): revise {i}\n\nMemhtml-Session: s-{i % 7}\n"
        tip = repo.create_commit("refs/heads/main", sig, sig, message, tree, [tip])
    repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
    return path, str(first), str(tip)


def start_daemon(store: Path, sock: Path) -> Any:
    import subprocess

    proc = subprocess.Popen(
        daemon_argv(store, sock),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with Client(sock, timeout=30) as client:
                client.call("status")
                return proc
        except Exception:
            if proc.poll() is not None:
                raise SystemExit(f"headd exited {proc.returncode}") from None
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("headd did not become ready")


def measure(
    conn: http.client.HTTPConnection, headers: dict[str, str], route: str, n: int, daemon: int
) -> dict[str, Any]:
    server: list[float] = []
    cpu: list[float] = []
    wall: list[float] = []
    daemon_before = daemon_cpu_ms(daemon)
    for _ in range(n):
        start = time.perf_counter()
        conn.request("GET", route, headers=headers)
        answer = conn.getresponse()
        answer.read()
        wall.append((time.perf_counter() - start) * 1000)
        if answer.status != 200:
            raise SystemExit(f"{route} answered {answer.status}")
        found = _TIMING.search(answer.getheader("server-timing") or "")
        assert found is not None, "the console sent no Server-Timing"
        server.append(float(found.group(1)))
        cpu.append(float(found.group(2)))
    daemon_ms = (daemon_cpu_ms(daemon) - daemon_before) / n
    return {
        "route": route,
        "server_ms": summary(server),
        "console_cpu_ms": summary(cpu),
        "daemon_cpu_ms_mean": round(daemon_ms, 3),
        "cpu_ms_mean": round(statistics.fmean(cpu) + daemon_ms, 3),
        "round_trip_ms": summary(wall),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--history", type=int, default=60)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="headd-ui-bench-"))
    try:
        t0 = time.perf_counter()
        store, path, first = cached_store(args.n, args.history)
        build_s = time.perf_counter() - t0
        daemon = start_daemon(store, work / "head.sock")
        server = ConsoleServer(store, work / "head.sock", 0, spawn=False)
        thread = threading.Thread(target=server.serve, daemon=True)
        thread.start()
        while not server.server.started:
            time.sleep(0.02)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            host = f"127.0.0.1:{server.port}"
            headers = {"Host": host, "Cookie": f"{server.secret.cookie_name}={server.secret.token}"}
            p = quote(path, safe="/")
            pages = {
                "search": f"/?q={quote(QUERY)}",
                "memory": f"/memory?path={p}",
                "history": f"/history?path={p}",
                "time_travel": f"/memory?path={p}&at={first}",
                "activity": "/activity",
                "review": "/review",
            }
            for route in pages.values():  # warm: first parse of templates, first git reads
                measure(conn, headers, route, 2, daemon.pid)
            results = {
                name: measure(conn, headers, route, args.requests, daemon.pid)
                for name, route in pages.items()
            }
        finally:
            server.stop()
            thread.join(10)
            daemon.terminate()
            daemon.wait(30)
        worst = max(r["server_ms"]["p99"] for r in results.values())
        out = {
            "bench": "ui_bench",
            "n": args.n,
            "history_commits": args.history,
            "requests_per_page": args.requests,
            "build_s": round(build_s, 1),
            "pages": results,
            "goal": f"server time p50 <= {GOAL_MS:g} ms on every page (CPU: console + daemon)",
            "worst_p99_ms": worst,
            "load_average": os.getloadavg(),
            "pass_wall": all(r["server_ms"]["p50"] <= GOAL_MS for r in results.values()),
            "pass_cpu": all(r["cpu_ms_mean"] <= GOAL_MS for r in results.values()),
        }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
