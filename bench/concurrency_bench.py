"""Sixteen agents writing at once through the real daemon: throughput and client retries.

``python -m bench.concurrency_bench [--n 2000] [--writers 16] [--writes 20] [--runs 3]``: for
each run, a fresh copy of a store of ``n`` memories with its work tree, the real ``headd
--embedder off``, then ``writers`` threads, each on its own connection and session, each
committing ``writes`` distinct new memories one at a time (``session.apply`` of one ``write``,
then ``session.commit``). Two modes, interleaved run by run so machine noise hits both:

- ``auto``: ``session.commit`` with its default ``rebase: "auto"`` (the daemon rebases a stale
  base inside its commit lock); a client retry would be a ``rebase-needed`` answer.
- ``never``: ``rebase: "never"``, the client answering each ``rebase-needed`` with
  ``session.rebase`` and committing again, up to 11 tries (the peer this replaces).

Prints one JSON document: per mode, the medians over runs of commits per second (wall), the
daemon's CPU seconds, retries and writes that never landed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
from pathlib import Path
from typing import Any

from headd_client.sync_client import Client

from bench.daemon_bench import Daemon, log, process_cpu_s, refresh_stat_cache
from bench.support.stores import build_store
from bench.support.threads import timed_threads

TRIES = 11


def write_op(writer: int, n: int) -> dict[str, str]:
    return {
        "op": "write",
        "title": f"Writer {writer} note {n}",
        "type": "semantic",
        "claim": f"Host w{writer}n{n} answers on port {1000 + writer * 100 + n}.",
    }


def run_writers(sock: Path, writers: int, writes: int, mode: str) -> dict[str, Any]:
    retries = [0] * writers
    lost = [0] * writers

    def writer(w: int, barrier: threading.Barrier) -> None:
        with Client(sock, timeout=600) as c:
            session = c.call("session.open")["session"]
            barrier.wait()
            for n in range(writes):
                c.call("session.apply", session=session, ops=[write_op(w, n)])
                for attempt in range(TRIES):
                    result = c.call("session.commit", session=session, rebase=mode)
                    if result["outcome"] != "rebase-needed":
                        break
                    retries[w] += 1
                    if attempt + 1 < TRIES:
                        c.call("session.rebase", session=session)
                if result["outcome"] != "committed":
                    lost[w] += 1
                    c.call("session.close", session=session)
                    session = c.call("session.open")["session"]
            c.call("session.close", session=session)

    wall = timed_threads(writers, writer)
    landed = writers * writes - sum(lost)
    return {
        "wall_s": wall,
        "commits_per_s": landed / wall,
        "retries": sum(retries),
        "not_landed": sum(lost),
    }


def one_run(pristine: Path, work: Path, mode: str, writers: int, writes: int) -> dict[str, Any]:
    store = work / "store"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(pristine, store, symlinks=True)
    refresh_stat_cache(store)
    daemon = Daemon(store, work)
    try:
        cpu_before = process_cpu_s(daemon.proc.pid)
        figures = run_writers(daemon.sock, writers, writes, mode)
        figures["daemon_cpu_s"] = process_cpu_s(daemon.proc.pid) - cpu_before
    finally:
        daemon.stop()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="memories in the store")
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--writes", type=int, default=20, help="commits per writer")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", default="auto,never")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory(prefix="headd-writers-") as tmp:
        pristine = Path(tmp) / "pristine"
        build_store(pristine, args.n, checkout=True)
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
        for k in range(args.runs):
            for mode in modes:
                log(f"run {k + 1}/{args.runs}: rebase={mode}")
                got = one_run(pristine, Path(tmp) / "work", mode, args.writers, args.writes)
                log(f"  {json.dumps(got)}")
                runs[mode].append(got)
    out: dict[str, Any] = {
        "n": args.n,
        "writers": args.writers,
        "writes": args.writes,
        "runs": args.runs,
    }
    for mode, got in runs.items():
        out[mode] = {
            key: statistics.median(r[key] for r in got)
            for key in ("commits_per_s", "wall_s", "daemon_cpu_s", "retries", "not_landed")
        }
    if "auto" in out and "never" in out:
        out["auto_over_never_commits_per_s"] = (
            out["auto"]["commits_per_s"] / out["never"]["commits_per_s"]
        )
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
