"""The MCP bridge against memhtml 0.15.1's MCP server, on the same store and queries, in one run.

``python -m bench.mcp_bench [--scifact DIR] [--n 10000] [--queries 200]`` (SciFact from
``--scifact`` or ``HEADD_SCIFACT``) builds a store of ``n`` memories (``bench.support.stores``:
SciFact abstracts, topped up with generated notes), indexes it for
memhtml (``memhtml index rebuild``), starts ``headd`` on it with ``--embedder off`` (memhtml runs
with ``MEMHTML_EMBED=off``: both answer lexically) and measures:

- ``memory_search`` through ``headctl mcp`` and through ``memhtml serve mcp``: one long-lived
  server each, the same SciFact queries, each timed from the request's write to its answer's read
  (``bench.peers.memhtml_mcp.McpServer``); p50/p99 and the ratio;
- spawn to first ``tools/list`` answer: ``headctl mcp`` with the daemon already up, the official
  SDK's own low-level stdio server (one tool, nothing else: the floor of building on the SDK),
  and ``memhtml serve mcp``; wall time and the child's CPU time;
- the hooks: ``headctl hook prompt-submit`` and ``session-start`` as Claude Code runs them (a
  process per call, payload on stdin), start to exit.

Prints one JSON document on stdout. memhtml comes from ``bash bench/peers/peers.sh``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headd_client.mcp.protocol import handshake_lines

from bench.peers import memhtml_mcp as mcp_peer
from bench.support import stores
from bench.support.daemon_measure import summary
from bench.support.data import SCIFACT_ENV
from bench.support.serve import daemon_argv

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
HANDSHAKE = handshake_lines("mcp-bench")

SDK_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer
    app = MCPServer("floor")
    @app.tool()
    def memory_search(query: str) -> dict:
        return {"hits": []}
    app.run()
    """
)


def compile_bytecode() -> None:
    """Write the packages' bytecode, as ``pip install`` does for an installed headd: a
    development checkout run with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every
    module at every spawn, which is not what an agent's machine pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    dirs = [str(REPO / d) for d in ("headd", "client", "sqlite_plane")]
    subprocess.run(
        [PYTHON, "-m", "compileall", "-q", *dirs], check=True, env=env, stdout=subprocess.DEVNULL
    )


def headctl(store: Path, sock: Path) -> list[str]:
    return [PYTHON, "-m", "headd_client.headctl", "--store", str(store), "--socket", str(sock)]


def spawn_to_tools_list(
    command: Sequence[str], env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """(wall s, child CPU s) from spawning ``command`` to reading its ``tools/list`` answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(cwd),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
    proc.stdin.flush()
    wall = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{command[0]} closed stdout before tools/list")
        if json.loads(line).get("id") == 2:
            wall = time.perf_counter() - start
            break
    proc.stdin.close()
    proc.wait(30)
    proc.stdout.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def spawn_figures(
    command: Sequence[str], env: dict[str, str], cwd: Path, runs: int
) -> dict[str, Any]:
    spawn_to_tools_list(command, env, cwd)  # warm the page cache and the bytecode
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = spawn_to_tools_list(command, env, cwd)
        walls.append(wall * 1000)
        cpus.append(cpu * 1000)
    return {"wall_ms": summary(walls), "cpu_ms": summary(cpus)}


def hook_figures(
    store: Path, sock: Path, event: str, payload: dict[str, Any], runs: int
) -> dict[str, Any]:
    walls, printed = [], 0
    text = json.dumps(payload)
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [*headctl(store, sock), "hook", event],
            input=text,
            capture_output=True,
            text=True,
            timeout=30,
        )
        walls.append((time.perf_counter() - start) * 1000)
        printed += bool(done.stdout)
    return {"wall_ms": summary(walls), "runs_with_output": printed, "runs": runs}


def wait_daemon(sock: Path, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    from headd_client.sync_client import Client

    from headd.errors import DaemonUnavailable

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("headd exited")
        try:
            with Client(sock, timeout=10) as c:
                c.call("status")
                return
        except DaemonUnavailable:
            time.sleep(0.1)
    raise RuntimeError("headd did not answer")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scifact", type=Path, help="the SciFact directory (else $HEADD_SCIFACT)")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--spawn-runs", type=int, default=7)
    parser.add_argument("--hook-runs", type=int, default=15)
    parser.add_argument("--work", type=Path, help="where to build the store (default: a temp dir)")
    args = parser.parse_args(argv)
    if args.scifact is not None:
        os.environ[SCIFACT_ENV] = str(args.scifact)
    work = args.work or Path(tempfile.mkdtemp(prefix="mcpb-"))
    store = work / "store"
    out: dict[str, Any] = {"n": args.n, "memhtml": mcp_peer.memhtml_version()}
    if not (store / ".git").exists():
        out["store_sha"] = stores.build_store(store, args.n, checkout=True)
    (store / ".gitignore").write_text("/.memhtml/\n", encoding="utf-8")
    queries = [text for _, text in stores.scifact_queries()][: args.queries]
    indexed = (store / ".memhtml" / "index.db").exists()
    command = ["index", "update"] if indexed else ["index", "rebuild"]
    out[f"memhtml_index_{command[1]}_s"], _ = mcp_peer.run_memhtml(store, command)
    compile_bytecode()

    sock = Path(tempfile.mkdtemp(prefix="mb-", dir="/tmp")) / "h.sock"
    env = {**os.environ, "HEADD_EMBEDDER": "off"}
    env.pop("HEADD_SOCKET", None)
    daemon = subprocess.Popen(
        daemon_argv(store, sock, python=PYTHON),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        wait_daemon(sock, daemon)
        ours = mcp_peer.mcp_search_latencies(
            store, queries, command=[*headctl(store, sock), "mcp", "--no-spawn"]
        )
        theirs = mcp_peer.mcp_search_latencies(store, queries)
        ours_s, theirs_s = summary(ours.pop("latencies_ms")), summary(theirs.pop("latencies_ms"))
        out["memory_search"] = {
            "queries": len(queries),
            "headctl_mcp_ms": ours_s,
            "memhtml_mcp_ms": theirs_s,
            "p50_ratio": round(theirs_s["p50"] / ours_s["p50"], 1),
            "p99_ratio": round(theirs_s["p99"] / ours_s["p99"], 1),
            "headctl_sample": ours["sample_answer"][:200],
        }
        floor = work / "sdk_floor.py"
        floor.write_text(SDK_SERVER, encoding="utf-8")
        out["spawn_to_tools_list"] = {
            "headctl_mcp_daemon_up": spawn_figures(
                [*headctl(store, sock), "mcp", "--no-spawn"], env, REPO, args.spawn_runs
            ),
            "official_sdk_server_one_tool": spawn_figures(
                [PYTHON, str(floor)], env, REPO, args.spawn_runs
            ),
            "memhtml_serve_mcp": spawn_figures(
                [*mcp_peer.memhtml_command(), "serve", "mcp"],
                mcp_peer.memhtml_env(store),
                store,
                max(3, args.spawn_runs // 2),
            ),
        }
        payload = {
            "session_id": "bench",
            "transcript_path": "",
            "cwd": str(store),
            "hook_event_name": "UserPromptSubmit",
        }
        out["hooks"] = {
            "prompt_submit": hook_figures(
                store, sock, "prompt-submit", {**payload, "prompt": queries[0]}, args.hook_runs
            ),
            "session_start": hook_figures(
                store,
                sock,
                "session-start",
                {**payload, "cwd": "/src/scifact-claims"},
                args.hook_runs,
            ),
        }
    finally:
        daemon.terminate()
        daemon.wait(30)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
