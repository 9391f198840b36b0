"""Commit latency of the session path on a real store.

Usage: python -m bench.commit_bench [--files N | --store PATH] [--commits K] [--batch B]
                                      [--profile]

Builds a store of N memory files (rendered by the project's writer) with the branch checked out,
or copies the store at PATH with its checkout (e.g. the daemon bench's cached ``headd-daemon-bench/n10000/pristine``;
the copy's stat cache is refreshed with ``git update-index --refresh``, as a used store's is;
the original is never written), then times K sessions of B puts each through ``SessionManager``:
open, apply, commit (the checkout follows every commit; git's index is written after the answer,
as the daemon does, and timed apart as ``index_after``). Prints one JSON line with wall p50/p95
per phase and the commit's CPU p50/p95 (``time.process_time``: the machine is shared, so CPU is
the steadier figure); ``--profile`` prints the commits' cProfile to stderr. memhtml's figure to
compare with: a session commit through their CLI takes seconds.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2

from headd.memfile.render import fields_from_write, render_memory
from headd.ops import Put
from headd.store.manager import SessionManager

NOW = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)


def memory(i: int, salt: str = "") -> str:
    fields = fields_from_write(
        title=f"Fact {salt}{i}",
        memory_type="semantic",
        now=NOW,
        claim=f"Fact {salt}{i} holds for component {i % 97} under load {i}.",
        body=[f"Some body text for fact {i}, with words to index."],
        entities=[f"system:c{i % 31}"],
    )
    return render_memory(fields)


def build_store(root: Path, files: int) -> Path:
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.config["user.name"] = "bench"
    repo.config["user.email"] = "bench@example.org"
    index = repo.index
    for i in range(files):
        path = f"areas/b{i % 20}/fact-{i}.html"
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(memory(i), encoding="utf-8")
        index.add(path)
    index.write()
    sig = pygit2.Signature("bench", "bench@example.org", int(NOW.timestamp()), 0)
    repo.create_commit("HEAD", sig, sig, "seed", index.write_tree(), [])
    return root


def copy_store(source: Path, dest: Path) -> Path:
    """A copy of ``source`` (work tree and ``.git``), its index stat data refreshed."""
    shutil.copytree(source, dest, symlinks=True)
    subprocess.run(["git", "-C", str(dest), "update-index", "-q", "--refresh"], check=False)
    return dest


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--store", type=Path, help="copy this store instead of building one")
    parser.add_argument("--profile", action="store_true", help="cProfile of the commits")
    args = parser.parse_args()
    tick = [NOW]

    def clock() -> datetime:
        tick[0] += timedelta(seconds=1)
        return tick[0]

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if args.store is not None:
            store = copy_store(args.store, Path(tmp) / "store")
            files = None
        else:
            store = build_store(Path(tmp) / "store", args.files)
            files = args.files
        build_s = time.perf_counter() - t0
        manager = SessionManager(store, clock=clock)
        t0 = time.perf_counter()
        manager.view(manager.open(id="warm").session)  # first version load
        load_s = time.perf_counter() - t0
        phases: dict[str, list[float]] = {
            "open": [],
            "apply": [],
            "commit": [],
            "total": [],
            "index_after": [],
        }
        commit_cpu: list[float] = []
        profile = cProfile.Profile() if args.profile else None
        for k in range(args.commits):
            start = time.perf_counter()
            s = manager.open().session
            opened = time.perf_counter()
            ops = [
                Put(path=f"areas/new/k{k}-{j}.html", html=memory(j, salt=f"k{k}-"))
                for j in range(args.batch)
            ]
            result = manager.apply(s, ops)
            assert result.violations == (), result.violations
            applied = time.perf_counter()
            cpu = time.process_time()
            if profile is not None:
                profile.enable()
            outcome = manager.commit(s, f"bench {k}", index_later=True)
            if profile is not None:
                profile.disable()
            commit_cpu.append(time.process_time() - cpu)
            assert outcome.outcome == "committed", outcome
            done = time.perf_counter()
            manager.flush_index()  # as the daemon does once it answered
            phases["index_after"].append(time.perf_counter() - done)
            manager.close(s)
            phases["open"].append(opened - start)
            phases["apply"].append(applied - opened)
            phases["commit"].append(done - applied)
            phases["total"].append(done - start)
    if profile is not None:
        pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    report = {
        "files": files,
        "store": str(args.store) if args.store is not None else None,
        "commits": args.commits,
        "batch": args.batch,
        "build_store_s": round(build_s, 2),
        "first_load_s": round(load_s, 2),
    }
    for name, values in phases.items():
        report[f"{name}_p50_ms"] = pct(values, 0.5)
        report[f"{name}_p95_ms"] = pct(values, 0.95)
    report["commit_cpu_p50_ms"] = pct(commit_cpu, 0.5)
    report["commit_cpu_p95_ms"] = pct(commit_cpu, 0.95)
    report["total_mean_ms"] = round(statistics.mean(phases["total"]) * 1000, 2)
    report["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    json.dump(report, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
