"""The Quickstart's main job, end to end on the bundled demo store.

Builds a git store from ``demo/store/`` in a temporary directory, starts the real daemon on its
socket, and then talks to it exactly as an agent would (newline-delimited JSON-RPC 2.0,
docs/protocol.md): status, a session that writes one memory and commits it, a search that finds it,
the head gate between the first commit and the new one (through ``headctl gate``), and a clean stop.
Exits non-zero if any step does not do what it should.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "demo" / "store"
BIN = Path(sys.executable).parent


def build_store(dest: Path) -> str:
    """Copy the demo memories into a new git repository and commit them; return the commit."""
    shutil.copytree(DEMO, dest)
    repo = pygit2.init_repository(str(dest), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sig = pygit2.Signature("demo", "demo@headd.local", 1_764_489_600, 0)
    return str(repo.create_commit("HEAD", sig, sig, "demo: twelve memories", tree, []))


class Rpc:
    """Just enough JSON-RPC over a Unix socket to show the wire as it is."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rwb")
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.file.write(json.dumps(msg).encode() + b"\n")
        self.file.flush()
        answer = json.loads(self.file.readline())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def wait_for_socket(path: Path, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"headd exited early with {proc.returncode}")
        if path.exists():
            try:
                Rpc(path).close()
                return
            except OSError:
                pass
        time.sleep(0.05)
    raise RuntimeError("headd did not open its socket in time")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the demo store directory")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="headd-demo-"))
    store = work / "store"
    base = build_store(store)
    sock = work / "head.sock"
    print(f"demo store: {store} at {base[:12]}")

    daemon = subprocess.Popen(
        [str(BIN / "headd"), "--store", str(store), "--socket", str(sock), "--embedder", "hash"],
    )
    try:
        wait_for_socket(sock, daemon)
        rpc = Rpc(sock)
        status = rpc.call("status")
        print(
            f"daemon up: {status['records']} memories at {status['sha'][:12]} "
            f"(loaded from {status['load_source']} in {status['load_ms']} ms)"
        )

        session = rpc.call("session.open")["session"]
        rpc.call(
            "session.apply",
            {
                "session": session,
                "ops": [
                    {
                        "op": "write",
                        "title": "Quickstart ran",
                        "type": "semantic",
                        "claim": "The headd quickstart writes one memory through a session.",
                        "body": "It then searches for it and runs the head gate.",
                        "tags": ["demo"],
                    }
                ],
            },
        )
        outcome = rpc.call("session.commit", {"session": session, "message": "demo: one write"})
        if outcome["outcome"] != "committed":
            raise RuntimeError(f"commit not landed: {outcome}")
        print(f"committed {outcome['sha'][:12]}: {', '.join(outcome['paths'])}")

        filled = rpc.call("vectors.fill")
        print(f"vectors: {filled['embedded']} embedded now, coverage {filled['coverage']:.0%}")
        for query in ("quickstart session memory", "system of record for orders"):
            found = rpc.call("search", {"query": query, "limit": 3})
            mode = "lexical only (degraded)" if found["degraded"] else "lexical + vector"
            print(f"search {query!r} at {found['sha'][:12]}, {mode} ({found['took_ms']} ms):")
            for hit in found["hits"]:
                print(f"  {hit['score']:.5f} {hit['path']}  [{', '.join(hit['arms'])}]")
            if not found["hits"]:
                raise RuntimeError(f"no hit for {query!r}")
        rpc.close()

        gate = subprocess.run(
            [
                str(BIN / "headctl"),
                "--store",
                str(store),
                "--socket",
                str(sock),
                "gate",
                base,
                outcome["sha"],
            ],
            capture_output=True,
            text=True,
        )
        print(f"head gate {base[:12]}..{outcome['sha'][:12]}: exit {gate.returncode}")
        print("  " + (gate.stdout.strip() or gate.stderr.strip()).replace("\n", "\n  "))
        if gate.returncode != 0:
            raise RuntimeError("the head gate refused the demo landing")
    finally:
        daemon.send_signal(signal.SIGTERM)
        rc = daemon.wait(timeout=30)
        print(f"daemon down (exit {rc}); socket removed: {not sock.exists()}")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
