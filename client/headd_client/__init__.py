"""Client library for headd: a sans-I/O protocol core, a sync client and an asyncio client.

    from headd_client import Client
    with Client("/path/to/store/.memhtml/head.sock") as c:
        hits = c.call("search", query="postgres", limit=5)["hits"]

Failures raise the classes of ``headd.errors`` (by their ``ERR_`` code), and
``DaemonUnavailable`` when no daemon answers.
"""

from headd.errors import DaemonUnavailable, ProtocolViolation
from headd_client.async_client import AsyncClient
from headd_client.protocol import ClientProtocol
from headd_client.sync_client import Client

__all__ = ["AsyncClient", "Client", "ClientProtocol", "DaemonUnavailable", "ProtocolViolation"]
