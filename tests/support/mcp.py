"""Helpers for the MCP bridge tests: the official SDK's client driving ``headctl mcp`` over stdio.

``bridge(store, sock)`` opens a real ``mcp.client.Client`` on a ``headctl mcp`` subprocess (the
SDK's own stdio transport), in the protocol era the test asks for. Daemons the bridge spawns
are detached; ``stop_spawned`` ends them by the pid their ``status`` reports.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from headd_client.sync_client import Client

from headd.errors import DaemonUnavailable
from support.data import DATA, REPO

TOOLS_LIST = DATA / "memhtml-0.15.1-mcp-tools-list.json"


def memhtml_tools() -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in json.loads(TOOLS_LIST.read_text(encoding="utf-8"))["tools"]}


def bridge_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "HEADD_EMBEDDER": "hash"}
    env.pop("HEADD_SOCKET", None)
    env.update(extra or {})
    return env


def bridge_args(store: Path, sock: Path, *extra: str) -> list[str]:
    return [
        "-m",
        "headd_client.headctl",
        "--store",
        str(store),
        "--socket",
        str(sock),
        "mcp",
        *extra,
    ]


@contextlib.asynccontextmanager
async def bridge(
    store: Path, sock: Path, *extra: str, mode: str = "legacy", env: dict[str, str] | None = None
) -> AsyncIterator[Any]:
    from mcp.client import Client as McpClient
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=bridge_args(store, sock, *extra),
        env=bridge_env(env),
        cwd=str(REPO),
    )
    async with McpClient(params, mode=mode) as client:  # type: ignore[arg-type]
        yield client


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)


def daemon_pid(sock: Path) -> int | None:
    try:
        with Client(sock, timeout=10) as c:
            return int(c.call("status")["pid"])
    except DaemonUnavailable:
        return None


def stop_spawned(sock: Path, timeout: float = 20.0) -> None:
    """End the daemon serving ``sock`` (one the bridge spawned), and wait for it to go."""
    pid = daemon_pid(sock)
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
