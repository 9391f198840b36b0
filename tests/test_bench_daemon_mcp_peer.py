"""``bench.peers.memhtml_mcp``: the MCP stdio client, against a real subprocess speaking newline JSON-RPC.

The server here is a tiny Python script standing in for ``memhtml serve mcp`` (which needs Node
and an indexed store): it checks the handshake order, interleaves a notification before each
answer, and answers ``tools/list`` with a schema, so the client's id matching, the tool choice
from the schema and the timing loop are exercised over real pipes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.peers.memhtml_mcp import McpServer, mcp_search_latencies, pick_search_tool

FAKE_SERVER = r"""
import json, sys
initialized = False
calls = 0
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if "id" not in msg:
        if method == "notifications/initialized":
            initialized = True
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                 "params": {"level": "info"}}) + "\n")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "serverInfo": {"name": "fake", "version": "9"}, "capabilities": {}}
    elif not initialized:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -1, "message": "no init"}}
        sys.stdout.write(json.dumps(out) + "\n"); sys.stdout.flush(); continue
    elif method == "tools/list":
        result = {"tools": [
            {"name": "trace_search", "inputSchema": {"properties": {"query": {}}}},
            {"name": "memory_read", "inputSchema": {"properties": {"path": {}}}},
            {"name": "memory_search",
             "inputSchema": {"properties": {"query": {}, "limit": {}, "scope": {}}}}]}
    elif method == "tools/call":
        calls += 1
        args = msg["params"]["arguments"]
        assert msg["params"]["name"] == "memory_search", msg
        result = {"content": [{"type": "text", "text": json.dumps(
            {"q": args["query"], "limit": args["limit"], "calls": calls})}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


@pytest.fixture
def fake_command(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_mcp.py"
    script.write_text(FAKE_SERVER)
    return [sys.executable, str(script)]


def test_search_latencies_through_a_real_stdio_server(
    tmp_path: Path, fake_command: list[str]
) -> None:
    got = mcp_search_latencies(tmp_path, ["alpha", "beta", "gamma"], warmup=2, command=fake_command)
    assert got["server"] == {"name": "fake", "version": "9"}
    assert got["tool"] == "memory_search"
    assert got["arguments"] == ["limit", "query"]
    assert len(got["latencies_ms"]) == 3
    assert all(ms > 0 for ms in got["latencies_ms"])
    assert '\\"q\\": \\"alpha\\"' in got["sample_answer"]


def test_request_skips_notifications_and_matches_ids(
    tmp_path: Path, fake_command: list[str]
) -> None:
    with McpServer(tmp_path, fake_command) as server:
        server.handshake()
        first = server.request(
            "tools/call", {"name": "memory_search", "arguments": {"query": "a", "limit": 3}}
        )
        second = server.request(
            "tools/call", {"name": "memory_search", "arguments": {"query": "b", "limit": 3}}
        )
    assert '"calls": 1' in first["content"][0]["text"]
    assert '"calls": 2' in second["content"][0]["text"]


def test_a_request_before_initialized_surfaces_the_servers_error(
    tmp_path: Path, fake_command: list[str]
) -> None:
    with McpServer(tmp_path, fake_command) as server, pytest.raises(RuntimeError, match="no init"):
        server.request("tools/list")


def test_pick_search_tool_reads_the_schema() -> None:
    tools = [
        {"name": "trace_search", "inputSchema": {"properties": {"query": {}}}},
        {"name": "memory_search", "inputSchema": {"properties": {"q": {}, "k": {}}}},
    ]
    assert pick_search_tool(tools) == ("memory_search", "q", "k")
    with pytest.raises(RuntimeError, match="no search tool"):
        pick_search_tool([{"name": "memory_read", "inputSchema": {}}])
    with pytest.raises(RuntimeError, match="no query argument"):
        pick_search_tool([{"name": "memory_search", "inputSchema": {"properties": {"x": {}}}}])
