"""A write displaced by another machine reaches the agent that made it.

Two real daemons on two clones of one bare repository; the agent is the official MCP SDK's
client over ``headctl mcp`` on side B. Side A lands a memory at a path and pushes it; B, not yet
aware, writes its own memory at the same path: B's agent is told ``committed`` and the remote
round moves B's version to ``refs/headd/conflicts/N``. The agent's next tool answer says so,
naming the conflict, and ``memory_status`` carries the remote's state.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.daemon import Daemon, short_socket_dir
from support.git import external_commit, git
from support.mcp import bridge, structured
from support.memory import memory_html
from support.stores import make_store

pytestmark = pytest.mark.slow

WINDOW = "areas/inbox/window-opens-on-monday.html"


@contextmanager
def sides(tmp_path: Path) -> Iterator[tuple[Daemon, Daemon]]:
    """Two daemons on two clones of one bare hub (A fetching every half second, B only after
    its own commits), with A's memory at WINDOW already on the hub; stopped after."""
    seed = tmp_path / "seed"
    make_store(seed)
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(hub)], check=True)
    for name in ("a", "b"):
        subprocess.run(["git", "clone", "-q", str(hub), str(tmp_path / name)], check=True)
    socks = short_socket_dir()
    remote = ["--embedder", "hash", "--remote", "origin"]
    a = Daemon(tmp_path / "a", socks / "a.sock", extra=[*remote, "--fetch-interval", "0.5"])
    b = Daemon(tmp_path / "b", socks / "b.sock", extra=[*remote, "--fetch-interval", "3600"])
    try:
        b.wait_ready()
        a.wait_ready()
        external_commit(tmp_path / "a", {WINDOW: memory_html("Window", "It opens on Monday.")})
        deadline = time.monotonic() + 30
        while git(hub, "rev-parse", "main") != git(tmp_path / "a", "rev-parse", "main"):
            assert time.monotonic() < deadline, "A's commit never reached the hub"
            time.sleep(0.1)
        yield a, b
    finally:
        a.stop()
        b.stop()


async def first_told(client: Any, key: str) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """``memory_status`` until its answer carries ``key`` (the round runs at once after the
    commit; bounded wait): what it told, and that status."""
    status: dict[str, Any] = {}
    for _ in range(150):
        status = structured(await client.call_tool("memory_status", {}))
        if status.get(key):
            break
        await anyio.sleep(0.2)
    return list(status.get(key) or []), status


def test_the_next_answer_names_the_conflict_that_displaced_a_write(tmp_path: Path) -> None:
    with sides(tmp_path) as (a, b):

        async def go() -> None:
            async with bridge(tmp_path / "b", b.socket_path) as client:
                wrote = structured(
                    await client.call_tool(
                        "memory_write",
                        {
                            "title": "Window opens on Friday",
                            "memory_type": "semantic",
                            "body": "The window opens on Friday.",
                            "path": WINDOW,
                        },
                    )
                )
                assert wrote["path"] == WINDOW and wrote["commit_sha"]
                told, _ = await first_told(client, "displaced")
                [conflict] = told
                assert conflict["path"] == WINDOW and conflict["ours"] == wrote["commit_sha"]
                assert conflict["ref"].startswith("refs/headd/conflicts/")
                # The notice rides on the first answer after the round, whose own status may
                # have been read just before the round ended: the next one lists the conflict.
                again = structured(await client.call_tool("memory_status", {}))
                assert "displaced" not in again, "told once"
                assert [c["path"] for c in again["remote"]["conflicts"]] == [WINDOW]
                assert {"ahead", "behind", "last_error"} <= set(again["remote"])

        anyio.run(go)
        assert "Friday" in git(tmp_path / "b", "show", f"refs/headd/conflicts/1:{WINDOW}")


def test_a_replayed_write_is_told_with_the_sha_on_the_branch(tmp_path: Path) -> None:
    """B writes a path A left alone while A's commit is on the hub: B's round replays B's
    commit onto A's, so the sha B's agent was given is not on the branch; the next answer
    names the one that is."""
    with sides(tmp_path) as (a, b):

        async def go() -> None:
            async with bridge(tmp_path / "b", b.socket_path) as client:
                wrote = structured(
                    await client.call_tool(
                        "memory_write",
                        {
                            "title": "Freeze starts on Friday",
                            "memory_type": "semantic",
                            "body": "The release freeze starts on Friday.",
                        },
                    )
                )
                told, _ = await first_told(client, "replayed")
                [replay] = told
                assert replay["ours"] == wrote["commit_sha"]
                assert replay["on_branch"] == git(tmp_path / "b", "rev-parse", "main")
                assert replay["on_branch"] != wrote["commit_sha"]

        anyio.run(go)
