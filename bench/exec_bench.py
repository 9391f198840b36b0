"""Code-mode: memhtml's recipes through ``memhtml exec`` and through headd's ``exec``, same store.

``python -m bench.exec_bench [--sizes 1000 10000] [--reps 5] [--memhtml-reps 1]`` on generated
stores of each size (cached under ``headd-exec-bench/n<N>`` of the bench cache): memories with
supersedes chains, contradictions, dangling links and entities drawn from a small pool, so every
recipe has something to find. For each size and each recipe of
``bench.support.exec_recipes.BENCH_RECIPES`` (census, orphans, longest supersedes chain, entity
co-occurrence):

1. ``memhtml exec --script`` (0.15.1, ``bash bench/peers/peers.sh``): wall time of the command;
2. headd's ``exec`` method over the socket (client to answer: the corpus, a worker, the script),
   the first call after start (``cold``: the corpus is built) and the median of ``--reps`` after;
3. ``headctl exec --script``: wall time of the command, headctl's own start included;

and whether the two tools printed the same answer. Then the search latency beside running
scripts: the p50 of searches on an idle daemon, and again while four scripts walk the corpus.
Prints one JSON document: every figure, the goals and their verdicts, the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pygit2
from headd_client.sync_client import Client

from bench.daemon_bench import Daemon, wait_index_idle
from bench.peers.memhtml_mcp import PeerMissing, memhtml_command, memhtml_env, memhtml_version
from bench.support.daemon_measure import percentile
from bench.support.data import cache_dir
from bench.support.exec_recipes import BENCH_RECIPES, IMPORT

CACHE = cache_dir("headd-exec-bench")
HEADCTL = Path(sys.executable).parent / "headctl"
TYPES = ("semantic", "procedural", "episodic", "agent_insight", "error_pattern", "verdict")
#: A census repeated for this many seconds: the scripts the search latency is measured beside.
SPIN_S = 8
SPIN = IMPORT + (
    f"const t = Date.now(); let n = 0; while (Date.now() - t < {SPIN_S * 1000}) n += corpus().size\n"
    "console.log(n)\n"
)


def log(message: str) -> None:
    print(f"[exec_bench] {message}", file=sys.stderr, flush=True)


def memory_path(i: int) -> str:
    return f"areas/bench/{i % 100:02d}/m{i:06d}.html"


def memory(i: int, rnd: random.Random) -> str:
    """Memory ``i``: every fifth starts a supersedes chain of five, one in seventeen contradicts
    a neighbour, one in fifty links to a path no file has, one to three entities of forty."""
    links = []
    if i % 5:
        links.append(("supersedes", f"/{memory_path(i - 1)}"))
    if i % 17 == 0:
        links.append(("contradicts", f"/{memory_path(i + 3)}"))
    if i % 50 == 0:
        links.append(("relates-to", f"/areas/gone/m{i}.html"))
    entities = sorted({f"service:s{rnd.randrange(40)}" for _ in range(rnd.randint(1, 3))})
    status = "archived" if i % 5 != 4 and i % 3 == 0 else "active"
    head = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>Bench memory {i}</title>",
        f'<meta name="memhtml-type" content="{TYPES[i % len(TYPES)]}">',
        f'<meta name="memhtml-status" content="{status}">',
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">',
        '<meta name="memhtml-updated" content="2026-01-01T00:00:00Z">',
        *(f'<meta name="memhtml-entity" content="{e}">' for e in entities),
        *(f'<link rel="memhtml-{rel}" href="{href}">' for rel, href in links),
        "</head>",
        "<body>",
        "<article>",
        f"<p><mark>Bench memory {i} holds fact number {i * 7919 % 100003}.</mark> "
        f"It was measured on day {i % 365}.</p>",
        f"<dl><dt>owner</dt><dd>team {i % 12}</dd></dl>",
        "</article>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(head)


def cached_store(n: int) -> Path:
    """The store of ``n`` generated memories, built once (into a scratch directory, renamed)."""
    dest = CACHE / f"n{n}"
    if (dest / ".git").is_dir():
        return dest
    log(f"building a store of {n} memories")
    scratch = CACHE / f"n{n}.build-{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    repo = pygit2.init_repository(str(scratch), initial_head="main")
    rnd = random.Random(n)
    index = repo.index
    files = {memory_path(i): memory(i, rnd) for i in range(n)}
    files[".gitignore"] = "/.memhtml/\n"
    for path, text in files.items():
        blob = repo.create_blob(text.encode())
        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
    tree = index.write_tree()
    sig = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600, 0)
    repo.create_commit("refs/heads/main", sig, sig, "bench store", tree, [])
    repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
    index.write()
    scratch.rename(dest)
    return dest


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of process ``pid`` and every process under it (``/proc``): the daemon and its
    code-mode workers, live and reaped."""
    total = 0.0
    todo = [pid]
    while todo:
        at = todo.pop()
        try:
            fields = Path(f"/proc/{at}/stat").read_text().rsplit(")", 1)[1].split()
            tasks = list(Path(f"/proc/{at}/task").iterdir())
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        for task in tasks:
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return total


def children_cpu_s() -> float:
    """CPU seconds of this process's finished children (a ``memhtml exec`` or ``headctl`` run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_memhtml_exec(store: Path, script: str) -> tuple[float, float, str]:
    """Wall ms, CPU ms of the command and everything it ran, and the script's stdout."""
    start, cpu = time.perf_counter(), children_cpu_s()
    done = subprocess.run(
        [*memhtml_command(), "exec", "--timeout-ms", "600000", "--script", script],
        env=memhtml_env(store),
        cwd=str(store),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = (time.perf_counter() - start) * 1000
    cpu = (children_cpu_s() - cpu) * 1000
    report = json.loads(done.stdout[done.stdout.index("{") :])["data"]
    if report["exitCode"] != 0:
        raise RuntimeError(f"memhtml exec failed: {report['stderr'][:500]}")
    return wall, cpu, report["stdout"]


def run_method(sock: Path, script: str, pid: int | None = None) -> tuple[float, float, str]:
    """Wall ms of the call, CPU ms of the daemon and its workers (given its ``pid``), stdout."""
    start, cpu = time.perf_counter(), tree_cpu_s(pid) if pid else 0.0
    with Client(sock, timeout=600) as client:
        answer = client.call("exec", {"script": script})
    wall = (time.perf_counter() - start) * 1000
    cpu = (tree_cpu_s(pid) - cpu) * 1000 if pid else 0.0
    if answer["exit_code"] != 0:
        raise RuntimeError(f"headd exec failed: {answer['stderr'][:500]}")
    return wall, cpu, answer["stdout"]


def run_headctl(store: Path, sock: Path, script: str, pid: int) -> tuple[float, float, str]:
    """Wall ms of the command, CPU ms of it and of the daemon with its workers, stdout."""
    start, cpu = time.perf_counter(), children_cpu_s() + tree_cpu_s(pid)
    done = subprocess.run(
        [str(HEADCTL), "--store", str(store), "--socket", str(sock), "exec", "--script", script],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = (time.perf_counter() - start) * 1000
    cpu = (children_cpu_s() + tree_cpu_s(pid) - cpu) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"headctl exec failed: {done.stderr[:500]}")
    return wall, cpu, done.stdout


def search_p50(sock: Path, queries: list[str]) -> float:
    times = []
    with Client(sock, timeout=60) as client:
        for query in queries:
            start = time.perf_counter()
            client.call("search", {"query": query, "limit": 10})
            times.append((time.perf_counter() - start) * 1000)
    return round(percentile(times, 0.5), 2)


def search_beside_scripts(sock: Path, scripts: int) -> dict[str, Any]:
    queries = [f"bench memory {i} fact number" for i in range(40)]
    search_p50(sock, queries[:10])  # warm
    idle = search_p50(sock, queries)
    threads = [threading.Thread(target=run_method, args=(sock, SPIN)) for _ in range(scripts)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    busy = search_p50(sock, queries)
    for thread in threads:
        thread.join()
    return {"scripts": scripts, "idle_p50_ms": idle, "beside_scripts_p50_ms": busy}


def measure(n: int, reps: int, memhtml_reps: int) -> dict[str, Any]:
    store = cached_store(n)
    out: dict[str, Any] = {"n": n, "recipes": {}}
    work = Path(tempfile.mkdtemp(prefix="hx-"))
    daemon = Daemon(store, work)
    try:
        wait_index_idle(daemon.sock)  # the plane's first update, off the figures
        for name, script in BENCH_RECIPES.items():
            log(f"n={n} {name}: headd")
            pid = daemon.proc.pid
            cold, _cold_cpu, answer = run_method(daemon.sock, script, pid)
            warm = [run_method(daemon.sock, script, pid) for _ in range(reps)]
            cli = [run_headctl(store, daemon.sock, script, pid) for _ in range(max(1, reps // 2))]
            figures: dict[str, Any] = {
                "headd_method_cold_ms": round(cold, 1),
                "headd_method_ms": median([w for w, _, _ in warm]),
                "headd_method_cpu_ms": median([c for _, c, _ in warm]),
                "headctl_ms": median([w for w, _, _ in cli]),
                "headctl_cpu_ms": median([c for _, c, _ in cli]),
                "answer": json.loads(answer),
            }
            try:
                log(f"n={n} {name}: memhtml")
                runs = [run_memhtml_exec(store, script) for _ in range(memhtml_reps)]
                figures["memhtml_ms"] = median([wall for wall, _, _ in runs])
                figures["memhtml_cpu_ms"] = median([cpu for _, cpu, _ in runs])
                figures["same_answer"] = all(
                    json.loads(text) == figures["answer"] for _, _, text in runs
                )
                figures["ratio_method"] = round(
                    figures["memhtml_ms"] / figures["headd_method_ms"], 1
                )
                figures["ratio_headctl"] = round(figures["memhtml_ms"] / figures["headctl_ms"], 1)
            except (PeerMissing, RuntimeError) as exc:
                figures["memhtml"] = str(exc)
            out["recipes"][name] = figures
        log(f"n={n}: search beside scripts")
        out["search"] = search_beside_scripts(daemon.sock, 4)
    finally:
        daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    return out


def goals(results: list[dict[str, Any]]) -> dict[str, Any]:
    largest = max(results, key=lambda r: r["n"])
    census = largest["recipes"]["census"]
    ratios = [
        figures.get("ratio_method")
        for r in results
        for figures in r["recipes"].values()
        if figures.get("ratio_method") is not None
    ]
    search = largest["search"]
    return {
        f"census_{largest['n']}_method_ms": {
            "figure": census["headd_method_ms"],
            "goal": "< 200",
            "pass": census["headd_method_ms"] < 200,
        },
        "min_ratio_vs_memhtml": {
            "figure": min(ratios) if ratios else None,
            "goal": ">= 10",
            "pass": (min(ratios) >= 10) if ratios else None,
        },
        "search_p50_beside_4_scripts_ms": {
            "figure": search["beside_scripts_p50_ms"],
            "idle": search["idle_p50_ms"],
            "goal": "within 2x of idle",
            "pass": search["beside_scripts_p50_ms"] <= 2 * max(search["idle_p50_ms"], 1.0),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--memhtml-reps", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        version: str | None = memhtml_version()
    except (OSError, KeyError):
        version = None
    results = [measure(n, args.reps, args.memhtml_reps) for n in args.sizes]
    out = {
        "bench": "exec",
        "memhtml": version,
        "cpus": os.cpu_count(),
        "load": list(os.getloadavg()),
        "results": results,
        "goals": goals(results),
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
