"""The client's public API, locked: what ``headd_client`` exports and what its clients offer.

A name added to or removed from the package's surface is a decision, so it fails here until the
lists below say so (and docs/client.md with them). Each client offers the same typed calls
(``headd_client.calls.TYPED_CALLS``), declared once for the type checker and made on first use;
the declarations and the list must agree, or a call would type-check and then not exist.

Seen red: with ``"search"`` dropped from ``TYPED_CALLS`` (the declarations disagree), and with a
stray ``Call`` exported from ``headd_client``.
"""

from __future__ import annotations

import inspect
import re
import types

import headd_client
from headd_client import calls
from headd_client.async_client import AsyncClient
from headd_client.sync_client import Client

EXPORTED = {
    "AsyncClient",
    "Client",
    "ClientProtocol",
    "DaemonUnavailable",
    "ProtocolViolation",
    "default_socket",
}

TYPED = (
    "status",
    "search",
    "read",
    "skipped",
    "resolve",
    "inbound",
    "by_entity",
    "by_frame_key",
    "by_content_hash",
    "advance",
    "vectors_fill",
    "session_open",
    "session_apply",
    "session_commit",
    "session_rebase",
    "session_close",
    "session_list",
    "recall",
    "index_search",
    "index_status",
    "traces_search",
    "traces_show",
    "sync",
)

CLIENT_METHODS = {"call", "notify", "run", "connect", "close"}


def test_the_package_exports_exactly_its_public_names() -> None:
    assert set(headd_client.__all__) == EXPORTED
    for name in headd_client.__all__:
        member = getattr(headd_client, name)
        assert member.__name__ == name
    # Submodules become attributes of the package once anything imports them (headctl, mcp…),
    # so they are left out: the lock is on the names the package itself defines.
    public = {
        n
        for n, v in vars(headd_client).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    } - {"annotations", "TYPE_CHECKING", "Any"}
    assert public <= EXPORTED


def test_the_typed_calls_are_the_locked_list() -> None:
    assert calls.TYPED_CALLS == TYPED
    for name in TYPED:
        assert callable(getattr(calls, name)), name


def test_each_client_declares_every_typed_call_and_offers_it() -> None:
    for cls, wrapper in ((Client, "sync_method"), (AsyncClient, "async_method")):
        declared = re.findall(rf"(\w+) = {wrapper}\(calls\.(\w+)\)", inspect.getsource(cls))
        assert [name for name, _ in declared] == list(TYPED), cls.__name__
        assert all(name == target for name, target in declared)
        client = cls("/nonexistent/head.sock")
        for name in TYPED:
            assert inspect.ismethod(getattr(client, name)), (cls.__name__, name)
        assert not hasattr(client, "frobnicate")
        assert {n for n in dir(cls) if not n.startswith("_")} >= CLIENT_METHODS


def test_a_typed_call_keeps_its_signature() -> None:
    """The methods are the functions of ``calls``: same parameters, same answer type."""
    client = Client("/nonexistent/head.sock")
    assert inspect.signature(client.search).parameters.keys() == (
        inspect.signature(calls.search).parameters.keys()
    )
