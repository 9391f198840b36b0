"""Cold start of the real daemon: from git, from the tip's snapshot, from an ancestor's snapshot.

``python -m bench.coldstart_bench [--n 10000] [--store DIR]`` builds (or reuses) a store of ``n``
memories (``bench.support.stores``), then starts the real ``headd`` three times (``--embedder off``,
``--snapshot-interval 0``):

1. with no snapshot: ``load_source: git``; waits for the background snapshot write (its ms, bytes);
2. again on the same commit: ``snapshot``;
3. after one external commit (one memory rewritten): ``snapshot+advance``.

For each: wall time from spawn to the first ``status`` answer (READY, which includes starting
Python and importing the daemon), the daemon's CPU time by then (``/proc``), and its own
``load_ms``; the snapshot start runs ``--repeat`` times (each figure listed, and the median).
Then one ``search`` sent right after that first status answer: ``first_search_s`` is its wall
time from READY (so a start that defers work past READY shows what the first answer pays for it).
Also measured in this process: mapping + decoding the snapshot (wall and CPU), and the imports
the daemon makes before it loads, in a fresh interpreter (wall and CPU). Prints one JSON object
with the load average at the start.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2
from headd_client.sync_client import Client

from bench.support.stores import build_store

REPO = Path(__file__).resolve().parents[1]


def commit_one_change(store: Path) -> str:
    """Rewrite one memory's first paragraph through pygit2 onto ``main``; the new sha."""
    repo = pygit2.Repository(str(store))
    parent = repo.revparse_single("refs/heads/main")
    index = pygit2.Index()
    index.read_tree(parent.peel(pygit2.Tree))
    path = next(entry.path for entry in index if entry.path.endswith(".html"))
    text = repo[index[path].id].read_raw().decode()
    changed = text.replace("</p>", " Edited for the cold start bench.</p>", 1)
    blob = repo.create_blob(changed.encode())
    index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
    signature = pygit2.Signature("bench", "bench@headd.local")
    sha = repo.create_commit(
        None, signature, signature, "bench edit", index.write_tree(repo), [parent.id]
    )
    repo.references["refs/heads/main"].set_target(sha)
    return str(sha)


def start_daemon(store: Path, work: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    sock = work / "head.sock"
    log_path = work / f"headd-{time.monotonic_ns()}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "headd.daemon.main", "--store", str(store)]
            + ["--socket", str(sock), "--embedder", "off", "--snapshot-interval", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(REPO),
        )
    return proc, sock, log_path


def status_when_ready(proc: subprocess.Popen[bytes], sock: Path, log_path: Path) -> dict[str, Any]:
    while True:
        try:
            with Client(sock, timeout=300) as client:
                status = client.call("status")
            assert isinstance(status, dict)
            return status
        except Exception:
            if proc.poll() is not None:
                raise SystemExit(log_path.read_text()) from None
            time.sleep(0.01)


#: The query of the first search after READY (any text: the first call pays the late imports and
#: the builds a decode left for first use, whatever it asks).
FIRST_QUERY = "why did the deploy fail after the schema migration"


def first_search_s(sock: Path) -> float:
    """Wall seconds for one ``search`` answered (sent at once, on a new connection)."""
    started = time.perf_counter()
    with Client(sock, timeout=300) as client:
        answer = client.call("search", {"query": FIRST_QUERY})
    assert isinstance(answer, dict)
    return time.perf_counter() - started


def status_of(sock: Path) -> dict[str, Any]:
    with Client(sock, timeout=300) as client:
        status = client.call("status")
    assert isinstance(status, dict)
    return status


def cpu_s_of(pid: int) -> float:
    """User + system CPU seconds of a live process, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(store: Path, work: Path, *, wait_snapshot: bool) -> dict[str, Any]:
    spawned = time.perf_counter()
    proc, sock, log_path = start_daemon(store, work)
    try:
        status = status_when_ready(proc, sock, log_path)
        ready_s = time.perf_counter() - spawned
        ready_cpu_s = cpu_s_of(proc.pid)
        search_s = first_search_s(sock)
        out: dict[str, Any] = {
            "load_source": status["load_source"],
            "ready_s": round(ready_s, 3),
            "ready_cpu_s": round(ready_cpu_s, 3),
            "first_search_s": round(search_s, 3),
            "load_ms": status["load_ms"],
            "records": status["records"],
        }
        if wait_snapshot:
            while (status_of(sock)["snapshot"] or {}).get("last_sha") != status["sha"]:
                if proc.poll() is not None:
                    raise SystemExit(log_path.read_text())
                time.sleep(0.1)
            snap = status_of(sock)["snapshot"]
            out["snapshot_write_ms"] = snap["last_ms"]
            out["snapshot_bytes"] = snap["last_bytes"]
        return out
    finally:
        proc.terminate()
        proc.wait(900)


def repeated(store: Path, work: Path, times: int) -> dict[str, Any]:
    """``times`` snapshot starts: each figure, and the medians."""
    runs = [run(store, work, wait_snapshot=False) for _ in range(times)]
    out = dict(runs[0])
    for key in ("ready_s", "ready_cpu_s", "first_search_s", "load_ms"):
        values = [r[key] for r in runs]
        out[key] = round(statistics.median(values), 3)
        out[f"{key}_each"] = values
    return out


def decode_in_process(store: Path) -> dict[str, Any]:
    """Map + decode as the cold start does it (collector paused, maps left for first use)."""
    from headd.daemon.snapshot_store import SnapshotStore
    from headd.head.snapshot import decode_version

    sha = str(pygit2.Repository(str(store)).head.target)
    snapshots = SnapshotStore(store)
    times = []
    for _ in range(3):
        gc.disable()
        wall, cpu = time.perf_counter(), time.process_time()
        with snapshots.mapped(sha) as data:
            assert data is not None
            version = decode_version(data, expected_sha=sha)
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
        del version
        gc.enable()
    return {
        "decode_wall_s": [round(w, 3) for w, _c in times],
        "decode_cpu_s": [round(c, 3) for _w, c in times],
    }


#: Starting Python and importing what the daemon imports before READY, as ``headd.daemon.main``
#: does it (the module itself is light: ``main`` turns the cyclic collector off, then ``run``
#: imports the daemon).
DAEMON_IMPORTS = (
    "import gc; gc.disable(); import headd.daemon.main, uvloop, headd.daemon.handlers,"
    " headd.daemon.server, headd.daemon.coldstart, headd.head.snapshot, headd.embed.factory"
)


def import_time() -> dict[str, float]:
    """Starting Python and importing the daemon's modules (what ``headd`` runs before it loads)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", DAEMON_IMPORTS], check=True, cwd=str(REPO))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(time.perf_counter() - started, 3), "cpu_s": round(cpu, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--store", type=Path, help="a store to copy (default: build one)")
    parser.add_argument("--repeat", type=int, default=3, help="snapshot starts to run")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hdc-", dir="/tmp"))
    store = work / "store"
    try:
        if args.store:
            # A local clone hard-links the objects: seconds, where copying 10^5 loose objects
            # took minutes; the bench only adds objects, so the original is never touched.
            subprocess.run(
                ["git", "clone", "-q", "--no-checkout", str(args.store), str(store)], check=True
            )
        else:
            build_store(store, args.n)
        result: dict[str, Any] = {"n": args.n, "loadavg": [round(x, 2) for x in os.getloadavg()]}
        result["python_import"] = import_time()
        result["git"] = run(store, work, wait_snapshot=True)
        result["snapshot"] = repeated(store, work, max(1, args.repeat))
        result["in_process"] = decode_in_process(store)
        commit_one_change(store)
        result["snapshot+advance"] = run(store, work, wait_snapshot=False)
        print(json.dumps(result, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
