"""``memory_exec`` through the official MCP SDK's client over stdio, against a real daemon."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from support.codemode import CORPUS
from support.daemon import Daemon, short_socket_dir
from support.mcp import bridge, structured
from support.stores import make_store

from bench.support.exec_recipes import CENSUS


def test_memory_exec_runs_a_script_and_reports_with_memhtmls_keys(tmp_path: Path) -> None:
    sha = make_store(tmp_path, CORPUS)
    daemon = Daemon(tmp_path, short_socket_dir() / "h.sock").wait_ready()

    async def go() -> None:
        async with bridge(tmp_path, daemon.socket_path) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            exec_tool = tools["memory_exec"]
            assert exec_tool.annotations.read_only_hint is True
            assert "ranked retrieval FIRST" in (exec_tool.description or "")
            report = structured(await client.call_tool("memory_exec", {"script": CENSUS}))
            assert (report["sha"], report["exitCode"], report["timedOut"]) == (sha, 0, False)
            assert json.loads(report["stdout"])["memories"] == 11
            failing = structured(
                await client.call_tool(
                    "memory_exec", {"script": "for (;;) {}", "timeout_ms": 300, "sha": sha}
                )
            )
            assert (failing["exitCode"], failing["timedOut"], failing["timeoutMs"]) == (
                124,
                True,
                300,
            )
            refused = await client.call_tool("memory_exec", {"script": 1})
            assert refused.is_error

    try:
        anyio.run(go)
    finally:
        assert daemon.stop() == 0
