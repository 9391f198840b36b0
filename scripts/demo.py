"""The Quickstart's main job, end to end on the bundled demo store, with the real model.

Builds a git store from ``demo/store/`` in a temporary directory, starts the real daemon on its
socket with the default embedder (``auto``: the local all-MiniLM-L6-v2 the Quickstart installs),
and then talks to it through ``headd_client`` as an agent would: status, a wait for the vector
fill that shows the model's one-time conversion as it runs, a session that writes one memory and
commits it, searches that say which arms and which embedder answered, the head gate between the
first commit and the new one (through ``headctl gate``), and a clean stop. Exits non-zero if any
step does not do what it should.

The converted model is kept in ``.venv/headd-models`` (``$HEADD_MODEL_CACHE``), so the
conversion happens on the first run only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2
from headd_client import Client, DaemonUnavailable

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "demo" / "store"
BIN = Path(sys.executable).parent
#: How long the demo waits for the daemon's socket, and for the vectors of the first fill (which
#: includes the model's conversion on a first run): bounds, not expectations.
SOCKET_WAIT_S = 60.0
VECTORS_WAIT_S = 600.0
PHASES = {
    "idle": "model not loaded yet",
    "loading": "loading the model",
    "converting": "converting the model to int8 matrix products (first run only)",
    "ready": "model ready",
}


def build_store(dest: Path) -> str:
    """Copy the demo memories into a new git repository and commit them; return the commit."""
    shutil.copytree(DEMO, dest)
    repo = pygit2.init_repository(str(dest), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sig = pygit2.Signature("demo", "demo@headd.local", 1_764_489_600, 0)
    return str(repo.create_commit("HEAD", sig, sig, "demo: twelve memories", tree, []))


def wait_for_daemon(sock: Path, proc: subprocess.Popen[bytes]) -> Client:
    deadline = time.monotonic() + SOCKET_WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"headd exited early with {proc.returncode}")
        try:
            return Client(sock).connect()
        except DaemonUnavailable:
            time.sleep(0.05)
    raise RuntimeError("headd did not open its socket in time")


def wait_for_vectors(client: Client) -> dict[str, Any]:
    """Poll ``status`` until the vector fill covers the store, printing each phase the
    embedder passes through (with the seconds it has taken so far) as it happens."""
    started = time.monotonic()
    last = ""
    while True:
        status = client.call("status")
        state = status["embedder_state"]
        if state["state"] == "off":
            print(f"  vectors off: {state['reason']}; searches run lexical + recency")
            return status
        if state["state"] == "failed":
            raise RuntimeError(f"the embedder failed: {state['error']}")
        coverage = float(status["vectors"]["coverage"])
        phase = PHASES.get(state["state"], state["state"])
        if state["state"] == "ready":
            phase = f"embedding the memories ({coverage:.0%})"
        elapsed = time.monotonic() - started
        if phase != last:
            print(f"  {elapsed:5.1f} s  {phase}", flush=True)
            last = phase
        if state["state"] == "ready" and coverage >= 1.0:
            print(f"  {elapsed:5.1f} s  every memory has its vector")
            return status
        if elapsed > VECTORS_WAIT_S:
            raise RuntimeError(f"vectors not filled after {VECTORS_WAIT_S:.0f} s: {state}")
        time.sleep(0.25)


def show_search(client: Client, query: str, embedder: str) -> None:
    found = client.call("search", query=query, limit=3)
    if found["degraded"]:
        how = "lexical + recency only (no vector arm)"
    else:
        how = f"lexical + recency + vectors from {embedder}"
    print(f"search {query!r}: {how}, {found['took_ms']} ms")
    for hit in found["hits"]:
        print(f"  {hit['score']:.4f}  {hit['path']}  [{'+'.join(hit['arms'])}]")
        print(f"          {hit['claim']}")
    if not found["hits"]:
        raise RuntimeError(f"no hit for {query!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the demo store directory")
    parser.add_argument(
        "--embedder",
        default="auto",
        help="the daemon's embedder (default auto: the local model when installed)",
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="headd-demo-"))
    store = work / "store"
    base = build_store(store)
    sock = work / "head.sock"
    print(f"demo store: {store} at {base[:12]}")

    env = dict(os.environ)
    env.setdefault("HEADD_MODEL_CACHE", str(REPO / ".venv" / "headd-models"))
    daemon = subprocess.Popen(
        [
            str(BIN / "headd"),
            "--store",
            str(store),
            "--socket",
            str(sock),
            "--embedder",
            args.embedder,
            "--log-level",
            "WARNING",
        ],
        env=env,
    )
    rc = 1
    try:
        client = wait_for_daemon(sock, daemon)
        status = client.call("status")
        print(
            f"daemon up: {status['records']} memories at {status['sha'][:12]} "
            f"(loaded from {status['load_source']} in {status['load_ms']} ms)"
        )
        embedder = status["embedder_state"]["model"] or "none"
        print(f"embedder: {args.embedder} -> {embedder}")
        wait_for_vectors(client)

        session = client.call("session.open")["session"]
        client.call(
            "session.apply",
            session=session,
            ops=[
                {
                    "op": "write",
                    "title": "Quickstart ran",
                    "type": "semantic",
                    "claim": "The headd quickstart writes one memory through a session.",
                    "body": "It then searches for it and runs the head gate.",
                    "tags": ["demo"],
                }
            ],
        )
        outcome = client.call("session.commit", session=session, message="demo: one write")
        if outcome["outcome"] != "committed":
            raise RuntimeError(f"commit not landed: {outcome}")
        print(f"committed {outcome['sha'][:12]}: {', '.join(outcome['paths'])}")
        filled = client.call("vectors.fill")  # the new memory's vector, now
        print(f"vectors: {filled['embedded']} embedded now, coverage {filled['coverage']:.0%}")

        for query in ("did the quickstart write anything", "which database holds the orders"):
            show_search(client, query, embedder)
        client.close()

        gate = subprocess.run(
            [str(BIN / "headctl"), "--socket", str(sock), "--store", str(store), "gate", base]
            + [outcome["sha"]],
            capture_output=True,
            text=True,
        )
        print(f"head gate {base[:12]}..{outcome['sha'][:12]}: exit {gate.returncode}")
        print("  " + (gate.stdout.strip() or gate.stderr.strip()).replace("\n", "\n  "))
        print(
            "  (probe searches ranked at both commits: MRR is how high each probe's memory "
            "ranks; an inversion is one that fell out of the top k or lost to a memory it "
            "supersedes)"
        )
        if gate.returncode != 0:
            raise RuntimeError("the head gate refused the demo landing")
    finally:
        daemon.send_signal(signal.SIGTERM)
        rc = daemon.wait(timeout=30)
        print(f"daemon down (exit {rc}); socket removed: {not sock.exists()}")
        if args.keep:
            print(f"kept: {store}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
