"""Client library for headd: a sans-I/O protocol core, a sync client and an asyncio client.

    from headd_client import Client
    with Client(store="~/memhtml") as c:          # or Client("/path/to/head.sock")
        hits = c.search("postgres", limit=5).hits  # c.call("search", …) for scripts

Without a path the client finds the store's socket itself (``headd_client.discovery``).

Failures raise the classes of ``headd.errors`` (by their ``ERR_`` code), and
``DaemonUnavailable`` when no daemon answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from headd.errors import DaemonUnavailable, ProtocolViolation
from headd_client.discovery import default_socket
from headd_client.protocol import ClientProtocol
from headd_client.sync_client import Client

if TYPE_CHECKING:
    from headd_client.async_client import AsyncClient


def __getattr__(name: str) -> object:
    """``AsyncClient`` on first use: importing asyncio costs the blocking paths (``headctl``,
    its hooks and MCP server, which an agent spawns per session or per prompt) ~0.1 s of CPU."""
    if name == "AsyncClient":
        from headd_client.async_client import AsyncClient

        return AsyncClient
    raise AttributeError(f"module 'headd_client' has no attribute {name!r}")


__all__ = [
    "AsyncClient",
    "Client",
    "ClientProtocol",
    "DaemonUnavailable",
    "ProtocolViolation",
    "default_socket",
]
