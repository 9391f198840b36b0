"""Many machines, one memory: what following a git remote costs, measured end to end.

``python -m bench.remote_bench [--samples 15] [--burst 200] [--fetch-interval 1]``

Two real daemons serve two clones of one bare repository on this machine, each with ``--remote
origin``. Three figures, as JSON on stdout (logs on stderr):

- ``propagation``: a session commit on one side until a search on the other finds it (the
  requirement: p50 within 2 s at a 1 s fetch interval);
- ``push``: the cost of pushing one new commit (``RemoteSync.push_local``: git's own push over a
  local path), wall and CPU of the git processes;
- ``burst``: ``--burst`` writes, half on each side from four writers each at once, then the time
  from the last acknowledgement until both sides and the remote agree, and whether every write
  is on the remote exactly once.

The store is generated (small memories), so the bench needs no data set.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from headd_client import Client

log = logging.getLogger("bench.remote_bench")
REPO = Path(__file__).resolve().parents[1]


def memory(title: str, claim: str) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n"
        '<meta name="memhtml-type" content="semantic">\n'
        '<meta name="memhtml-status" content="active">\n'
        '<meta name="memhtml-created" content="2026-11-01T09:00:00Z">\n'
        '<meta name="memhtml-updated" content="2026-11-01T09:00:00Z">\n'
        f"</head>\n<body>\n<article>\n<p><mark>{claim}</mark></p>\n</article>\n</body>\n</html>\n"
    )


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def seed_store(root: Path, count: int = 200) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@localhost")
    (root / ".gitignore").write_text("/.memhtml/\n")
    for i in range(count):
        path = root / "areas" / "seed" / f"note-{i}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory(f"Seed note {i}", f"Seed note {i} records the number {i * 7}."))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")


class Side:
    def __init__(self, store: Path, sock: Path, fetch_interval: float) -> None:
        self.store = store
        self.sock = sock
        self.log = open(store.with_suffix(".log"), "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "headd.daemon.main",
                "--store", str(store), "--socket", str(sock), "--embedder", "off",
                "--remote", "origin", "--fetch-interval", str(fetch_interval),
            ],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=str(REPO),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(str(sock))
                break
            except OSError:
                time.sleep(0.05)

    def write(self, client: Client, title: str, claim: str) -> str:
        session = client.call("session.open", {})["session"]
        op = {"op": "write", "title": title, "type": "semantic", "claim": claim}
        client.call("session.apply", {"session": session, "ops": [op]})
        result = client.call("session.commit", {"session": session})
        if result["outcome"] != "committed":
            raise RuntimeError(f"commit answered {result}")
        return str(result["sha"])

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 4),
        "p90": round(pct(values, 0.9), 4),
        "max": round(max(values), 4),
        "n": len(values),
    }


def propagation(a: Side, b: Side, samples: int) -> dict[str, Any]:
    out = []
    with Client(str(a.sock)).connect() as writer, Client(str(b.sock)).connect() as reader:
        for i in range(samples):
            word = f"zephyr{i}quill"
            started = time.monotonic()
            a.write(writer, f"Propagation {i}", f"The {word} marker travels between machines.")
            while True:
                hits = reader.call("search", {"query": word, "limit": 1})["hits"]
                if hits:
                    break
                if time.monotonic() - started > 60:
                    raise RuntimeError(f"sample {i} never reached the other side")
                time.sleep(0.01)
            out.append(time.monotonic() - started)
    return {"seconds": summary(out)}


def push_cost(tmp: Path, commits: int) -> dict[str, Any]:
    from headd.remote.sync import RemoteSync
    from headd.store.ports import with_overlay
    from headd.store.versions import GitVersions

    store, hub = tmp / "pusher", tmp / "pusher-hub.git"
    seed_store(store, 20)
    subprocess.run(["git", "clone", "-q", "--bare", str(store), str(hub)], check=True)
    git(store, "remote", "add", "origin", str(hub))
    sync = RemoteSync(
        store, "origin", "refs/heads/main", versions=GitVersions(store), overlay=with_overlay
    )
    sync.round()
    walls, cpus = [], []
    for i in range(commits):
        path = store / "areas" / "push" / f"p-{i}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory(f"Push {i}", f"Push note {i} is pushed alone."))
        git(store, "add", "-A")
        git(store, "commit", "-q", "-m", f"push {i}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        report = sync.push_local()
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if report.action != "pushed":
            raise RuntimeError(f"push {i}: {report}")
    return {"wall_s": summary(walls), "git_cpu_s": summary(cpus)}


def claims_on(hub: Path) -> list[str]:
    out = []
    for path in git(hub, "ls-tree", "-r", "--name-only", "main").splitlines():
        if path.endswith(".html"):
            match = re.search(r"<mark>(.*?)</mark>", git(hub, "show", f"main:{path}"), re.S)
            if match:
                out.append(match.group(1))
    return out


def burst(hub: Path, a: Side, b: Side, total: int, writers: int = 4) -> dict[str, Any]:
    claims: list[str] = []
    errors: list[str] = []
    last_ack = [0.0]

    def write(side: Side, tag: str, count: int) -> None:
        try:
            with Client(str(side.sock)).connect() as client:
                for i in range(count):
                    claim = f"Burst {tag} entry {i} lands once."
                    side.write(client, f"Burst {tag} {i}", claim)
                    claims.append(claim)
                    last_ack[0] = time.monotonic()
        except Exception as exc:  # noqa: BLE001 - reported in the result
            errors.append(repr(exc))

    per = total // (2 * writers)
    threads = [
        threading.Thread(target=write, args=(side, f"{name}{w}", per))
        for name, side in (("a", a), ("b", b))
        for w in range(writers)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = time.monotonic()
    while True:
        tip = git(hub, "rev-parse", "main")
        if git(a.store, "rev-parse", "main") == tip == git(b.store, "rev-parse", "main"):
            break
        if time.monotonic() - written > 300:
            raise RuntimeError("the two sides never converged")
        time.sleep(0.05)
    converged = time.monotonic()
    on_hub = claims_on(hub)
    return {
        "writes": len(claims),
        "errors": errors,
        "write_s": round(written - started, 3),
        "commits_per_s": round(len(claims) / (written - started), 2),
        "convergence_after_last_ack_s": round(converged - last_ack[0], 3),
        "every_write_once": all(on_hub.count(c) == 1 for c in claims),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15, help="propagation samples")
    parser.add_argument("--burst", type=int, default=200, help="writes in the burst (both sides)")
    parser.add_argument("--pushes", type=int, default=20, help="single-commit pushes timed")
    parser.add_argument("--fetch-interval", type=float, default=1.0, help="the daemons' interval")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="headd-remote-bench-") as tmp_name:
        tmp = Path(tmp_name)
        seed = tmp / "seed"
        seed_store(seed)
        hub = tmp / "hub.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(hub)], check=True)
        sides = []
        for name in ("a", "b"):
            subprocess.run(["git", "clone", "-q", str(hub), str(tmp / name)], check=True)
            sides.append(Side(tmp / name, tmp / f"{name}.sock", args.fetch_interval))
        try:
            log.info("propagation, %d samples", args.samples)
            prop = propagation(sides[0], sides[1], args.samples)
            log.info("burst of %d writes", args.burst)
            burst_result = burst(hub, sides[0], sides[1], args.burst)
        finally:
            for side in sides:
                side.stop()
        log.info("push cost, %d pushes", args.pushes)
        push = push_cost(tmp, args.pushes)
    result = {
        "bench": "remote_bench",
        "fetch_interval_s": args.fetch_interval,
        "propagation": prop,
        "push": push,
        "burst": burst_result,
        "loadavg": os.getloadavg(),
    }
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
