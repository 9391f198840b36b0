"""The SQLite plane through the daemon: first index, index-plane search, recall, reinforce, and
how long an external commit takes to reach index.db in the background.

``python -m bench.daemon_plane_bench --n 2000`` builds a store (``bench.support.stores``, checked out),
starts a real daemon (``--embedder off``), and talks to it over its socket with the sync client.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headd_client.sync_client import Client

from bench.support.stores import build_store, scifact_queries

REPO = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn: object, runs: list[float]) -> object:
    start = time.perf_counter()
    out = fn()  # type: ignore[operator]
    runs.append((time.perf_counter() - start) * 1000.0)
    return out


def git(store: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    import os

    done = subprocess.run(
        ["git", "-C", str(store), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="plane-bench-"))
    store = work / "store"
    build_store(store, args.n, checkout=True)
    (store / ".git" / "info" / "exclude").write_text("/.memhtml/\n")
    sock = Path(tempfile.mkdtemp(prefix="hd-", dir="/tmp")) / "h.sock"
    log = open(work / "headd.log", "wb")  # noqa: SIM115
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "headd.daemon.main", "--store", str(store), "--socket", str(sock)]
        + ["--embedder", "off", "--trace-root", str(work / "claude")],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=str(REPO),
    )
    figures: dict[str, object] = {"n": args.n}
    try:
        while not sock.exists():
            time.sleep(0.05)
        time.sleep(0.2)
        with Client(sock, timeout=600) as c:
            ready = time.monotonic()
            figures["ready_s"] = round(ready - started, 2)
            while c.call("status", {})["index"]["updates"] < 1:
                time.sleep(0.1)
            figures["first_index_s_after_ready"] = round(time.monotonic() - ready, 2)
            figures["first_index_ms_in_writer"] = c.call("status", {})["index"]["last_update_ms"]
            queries = [q for _, q in scifact_queries()][: args.queries]
            search: list[float] = []
            recall: list[float] = []
            bump: list[float] = []
            for q in queries:
                hits = timed(lambda q=q: c.call("search", {"query": q, "plane": "index"}), search)
                timed(lambda q=q: c.call("recall", {"query": q}), recall)
                paths = [h["path"] for h in hits["hits"][:3]]  # type: ignore[index]
                timed(lambda p=paths: c.call("reinforce", {"paths": p}), bump)
            for name, runs in (("search_index", search), ("recall", recall), ("reinforce", bump)):
                figures[f"{name}_p50_ms"] = round(percentile(runs, 0.5), 2)
                figures[f"{name}_p95_ms"] = round(percentile(runs, 0.95), 2)
            lags = []
            for i in range(5):
                target = store / "areas" / "bench" / f"edit-{i}.html"
                target.parent.mkdir(parents=True, exist_ok=True)
                source = sorted(store.glob("resources/scifact/*.html"))[i]
                html = source.read_text()
                target.write_text(html.replace("</p>", f" Bench edit {i}.</p>", 1))
                git(store, "add", "--", str(target.relative_to(store)))
                git(store, "commit", "-q", "-m", f"edit {i}")
                sha = git(store, "rev-parse", "HEAD")
                moved = time.monotonic()
                while c.call("status", {})["index"]["indexed_sha"] != sha:
                    time.sleep(0.005)
                lags.append((time.monotonic() - moved) * 1000.0)
            figures["external_commit_to_indexed_ms"] = [round(x) for x in lags]
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
