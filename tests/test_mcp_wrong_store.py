"""An agent pointed at the wrong place: the bridge says why at once, creates nothing, and the
fix it names works as written.

The official MCP SDK's client drives ``headctl mcp`` with ``--store`` at a missing path, an empty
directory and a directory of other files; each tool call answers within a second with the real
reason, no daemon starts, and nothing is written there. ``headctl init`` as the answer names it
then makes a store the bridge serves.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from support.daemon import short_socket_dir
from support.mcp import bridge, bridge_env, daemon_pid, error_text, stop_spawned, structured


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.mark.parametrize("shape", ["missing", "empty", "other-files"])
def test_a_path_that_is_no_store_is_named_at_once_and_left_untouched(
    tmp_path: Path, shape: str
) -> None:
    store = tmp_path / "memory"
    if shape != "missing":
        store.mkdir()
    if shape == "other-files":
        (store / "notes.txt").write_text("not a memory\n", encoding="utf-8")
    before = _tree(store)
    sock = short_socket_dir() / "h.sock"
    answers: list[str] = []

    async def go() -> None:
        async with bridge(store, sock) as client:
            for _ in range(2):
                started = time.monotonic()
                failed = await client.call_tool("memory_search", {"query": "anything"})
                assert time.monotonic() - started < 1.0
                answers.append(error_text(failed))

    try:
        anyio.run(go)
        assert daemon_pid(sock) is None, "a daemon was started for a path that is no store"
    finally:
        stop_spawned(sock)
    assert _tree(store) == before, "the bridge wrote into a path that is no store"
    text = answers[-1]
    assert "no daemon answers" not in text
    assert {"missing": "no store at", "empty": "is empty", "other-files": "not a git"}[
        shape
    ] in text, text
    if shape == "other-files":
        return
    fix = text.split("`")[1]  # the command the answer names, run as written
    assert fix.startswith("headctl init ")
    args = shlex.split(fix)[1:]
    made = subprocess.run(
        [sys.executable, "-m", "headd_client.headctl", *args],
        capture_output=True,
        text=True,
        env=bridge_env(),
        timeout=120,
    )
    assert made.returncode == 0, made.stderr

    async def served() -> None:
        async with bridge(store, sock) as client:
            status = structured(await client.call_tool("memory_status", {}))
            assert status["head_sha"]

    try:
        anyio.run(served)
    finally:
        stop_spawned(sock)
