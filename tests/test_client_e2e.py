"""The sync and asyncio clients against the real daemon over a real socket.

The daemon runs in this process on its own thread and event loop (``support.inprocess``), which
keeps this module fast; the subprocess daemon is covered by test_daemon_e2e.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import msgspec
import pytest
from headd_client import calls
from headd_client.async_client import AsyncClient
from headd_client.sync_client import Client
from msgspec import UNSET
from support.daemon import short_socket_dir
from support.inprocess import InProcessDaemon
from support.stores import make_store

from headd.errors import (
    DaemonUnavailable,
    InvalidParams,
    MethodNotFound,
    PathNotFound,
    ProtocolViolation,
)
from headd.wire.answers import SearchAnswer, StatusAnswer, WireRecord

SHORT = "areas/inbox/user-prefers-short-answers.html"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessDaemon]:
    store = tmp_path_factory.mktemp("client") / "store"
    make_store(store)
    d = InProcessDaemon(store, short_socket_dir() / "head.sock").start()
    yield d
    assert d.stop() == 0
    assert not d.socket_path.exists()


def test_sync_client_calls_and_typed_errors(daemon: InProcessDaemon) -> None:
    with Client(daemon.socket_path) as c:
        assert c.call("status")["records"] == 5
        assert c.call("read", path=SHORT)["record"]["path"] == SHORT
        with pytest.raises(PathNotFound):
            c.call("resolve", path="areas/nope.html")
        with pytest.raises(InvalidParams):
            c.call("read")
        with pytest.raises(MethodNotFound):
            c.call("no.such.method")
        c.notify("status")
        assert c.call("status")["records"] == 5, "a notification leaves no answer behind"
        answers = c.batch([("status", None), ("read", {"path": SHORT}), ("bogus", None)])
        assert answers[0].result["records"] == 5
        assert answers[2].error is not None and answers[2].error.code == -32601


def test_sync_client_without_a_daemon() -> None:
    with pytest.raises(DaemonUnavailable):
        Client(short_socket_dir() / "none.sock").call("status")


def test_async_client_shares_one_connection_between_tasks(daemon: InProcessDaemon) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.socket_path) as c:
            results = await asyncio.gather(
                *(c.call("search", query="postgres", limit=1) for _ in range(20)),
                c.call("read", path=SHORT),
            )
            assert all(r["hits"][0]["path"].endswith("system-of-record.html") for r in results[:20])
            assert results[20]["record"]["path"] == SHORT
            with pytest.raises(PathNotFound):
                await c.call("resolve", path="areas/nope.html")
            await c.notify("status")
            assert (await c.call("status"))["records"] == 5

    asyncio.run(main())


def test_async_client_without_a_daemon() -> None:
    async def main() -> None:
        with pytest.raises(DaemonUnavailable):
            await AsyncClient(short_socket_dir() / "none.sock").call("status")

    asyncio.run(main())


def test_typed_calls_answer_the_wire_types(daemon: InProcessDaemon) -> None:
    """``client.search(...)`` and friends decode into ``headd.wire.answers``' Structs, and say
    what ``call`` says (the same daemon, the same bytes, read twice)."""
    with Client(daemon.socket_path) as c:
        status = c.status()
        assert isinstance(status, StatusAnswer) and status.records == 5
        found = c.search("postgres", limit=1)
        assert isinstance(found, SearchAnswer)
        assert found.hits[0].path.endswith("system-of-record.html")
        assert found.hits[0].record is UNSET, "a hit carries its record only when asked"
        with_records = c.search("postgres", limit=1, records=True)
        record = with_records.hits[0].record
        assert isinstance(record, WireRecord) and record.path == found.hits[0].path
        read = c.read(SHORT)
        assert read.record is not None and read.record.path == SHORT
        assert msgspec.json.decode(msgspec.json.encode(read)) == c.call("read", path=SHORT)
        assert (
            c.by_entity("tool:postgres").paths
            == c.call("by_entity", entity="tool:postgres")["paths"]
        )
        assert c.advance().sha == status.sha
        with pytest.raises(PathNotFound):
            c.resolve("areas/nope.html")
        opened = c.session_open()
        assert c.session_list().sessions[0].session == opened.session
        assert c.session_close(opened.session).closed


def test_a_typed_call_sends_only_the_params_it_changes() -> None:
    """The call a typed method sends is the one a hand-written ``call`` would."""
    call = calls.search("q", limit=3)
    assert (call.method, call.params) == ("search", {"query": "q", "limit": 3})
    assert calls.session_commit("s", rebase="never").params == {"session": "s", "rebase": "never"}
    with pytest.raises(ProtocolViolation):
        call.decode({"sha": None})


def test_the_async_client_runs_the_same_typed_calls(daemon: InProcessDaemon) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.socket_path) as c:
            found, read = await asyncio.gather(c.search("postgres", limit=1), c.read(SHORT))
            assert found.hits[0].path.endswith("system-of-record.html")
            assert read.record is not None and read.record.path == SHORT

    asyncio.run(main())
