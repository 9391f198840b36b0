"""``load_head`` of a benchmark store, serial and pooled, as CPU and wall time.

Usage: ``python -m bench.load_bench STORE [--workers 1 2] [--repeat 3]``. Prints one JSON
document. The serial pass's CPU time is what one core costs (the parse dominates it); the pooled
pass is measured in wall time, since its work happens in child processes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import pygit2

from headd.head.version import load_head


def _children_cpu() -> float:
    """CPU seconds used by finished child processes (the pool's workers) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    repo = pygit2.Repository(args.store)
    sha = str(repo.head.target)
    results = []
    for workers in args.workers:
        cpu_runs: list[float] = []
        child_runs: list[float] = []
        wall_runs: list[float] = []
        size = 0
        for _ in range(args.repeat):
            wall0 = time.perf_counter()
            cpu0 = time.process_time()
            child0 = _children_cpu()
            version = load_head(repo, sha, workers=workers)
            cpu_runs.append(time.process_time() - cpu0)
            child_runs.append(_children_cpu() - child0)
            wall_runs.append(time.perf_counter() - wall0)
            size = version.size
        results.append(
            {
                "workers": workers,
                "records": size,
                "cpu_seconds_best": round(min(cpu_runs), 3),
                "worker_cpu_seconds_best": round(min(child_runs), 3),
                "wall_seconds_best": round(min(wall_runs), 3),
                "wall_seconds_all": [round(w, 3) for w in wall_runs],
            }
        )
    report = {"store": args.store, "results": results, "load_average": list(os.getloadavg())}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
