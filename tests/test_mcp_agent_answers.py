"""What an agent meets through ``headctl mcp``: answers that are right for the question asked.

Each test drives the bridge with the official MCP SDK's client over stdio against a real daemon
on a real git store, as an agent does, and holds one defect an agent ran into.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.daemon import Daemon, short_socket_dir
from support.mcp import bridge, structured
from support.stores import make_store

POOL = "resources/database/connection-pool-size-is-forty.html"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Daemon]]:
    """A store made by ``make_store`` and a daemon serving it (hash embedder), stopped after."""
    (root := tmp_path / "store").mkdir()
    make_store(root)
    served = Daemon(root, short_socket_dir() / "h.sock", extra=["--embedder", "hash"])
    yield root, served.wait_ready()
    served.stop()


def test_include_archived_search_finds_the_archived_version(served: tuple[Path, Daemon]) -> None:
    """An agent told to retry with ``include_archived`` before concluding a fact is gone finds
    the archived version, marked with its successor; without the flag it stays out."""

    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            corrected = structured(
                await client.call_tool(
                    "memory_correct",
                    {
                        "target_path": POOL,
                        "title": "Connection limit is sixty",
                        "body": "The database connection limit is sixty per pod.",
                        "reason": "raised",
                    },
                )
            )
            moved = corrected["archived"][0]
            query = {"query": "connection pool size forty"}
            plain = structured(await client.call_tool("memory_search", query))
            assert moved not in [h["path"] for h in plain["hits"]]
            assert plain["archived_matches"] == 0
            wide = structured(
                await client.call_tool("memory_search", {**query, "include_archived": True})
            )
            paths = [h["path"] for h in wide["hits"]]
            assert moved in paths, paths
            hit = wide["hits"][paths.index(moved)]
            assert hit["superseded_by"] == corrected["path"]
            assert "lexical" in hit["arms"]
            assert wide["archived_matches"] >= 1
            assert {"path": moved, "superseded_by": corrected["path"]} in wide["archived"]

    anyio.run(go)


def _recalled(pack: dict[str, Any]) -> list[str]:
    sections = pack["sections"]
    return [e["path"] for name in ("arcs", "memories", "lateral") for e in sections[name]]


def test_recall_reads_its_own_writes_at_once(served: tuple[Path, Daemon]) -> None:
    """The first recall of a fresh daemon answers (no index error an agent cannot act on), and
    a recall right after a write finds the new memory, as search does."""
    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            first = await client.call_tool("memory_recall", {"query": "connection pool"})
            assert not first.is_error, first
            status = structured(await client.call_tool("memory_status", {}))
            assert status["index_fresh"] is True
            for n in range(3):
                wrote = structured(
                    await client.call_tool(
                        "memory_write",
                        {
                            "title": f"Heron nest {n}",
                            "memory_type": "semantic",
                            "body": f"The heron nest number {n} sits by the quarry lake.",
                        },
                    )
                )
                pack = structured(
                    await client.call_tool("memory_recall", {"query": f"heron nest number {n}"})
                )
                assert wrote["path"] in _recalled(pack), (n, pack)

    anyio.run(go)
