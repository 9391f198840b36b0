"""JSON-RPC 2.0 over one line: envelopes, batches, notifications, and every error mapping.

The dispatch used here is the real method layer (``methods.decode_request``) in front of a small
handler, so these tests pin the protocol layer and the params layer together without a head.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from msgspec import Raw

from headd.daemon.json_rpc import answer_line
from headd.errors import PathNotFound, SessionLocked
from headd.wire.methods import Read, SessionApply, Status, decode_request

calls: list[tuple[str, Any]] = []


async def dispatch(method: str, params: Raw | None) -> Any:
    request = decode_request(method, params)
    calls.append((method, request))
    match request:
        case Status():
            return {"ok": True}
        case Read(path="areas/boom.html"):
            raise RuntimeError("secret memory text must not leak")
        case Read(path="areas/missing.html"):
            raise PathNotFound("no memory at areas/missing.html", {"path": "areas/missing.html"})
        case Read(path=path):
            return {"path": path}
        case SessionApply():
            raise SessionLocked("busy", {"session": request.session})
    return None


def answer(line: str | bytes) -> Any:
    raw = line.encode() if isinstance(line, str) else line
    out = asyncio.run(answer_line(raw, dispatch))
    return None if out is None else json.loads(out)


def test_a_request_gets_its_result_and_id() -> None:
    assert answer('{"jsonrpc":"2.0","id":7,"method":"status"}') == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"ok": True},
    }


def test_string_and_null_ids_are_echoed() -> None:
    assert answer('{"jsonrpc":"2.0","id":"a-1","method":"status"}')["id"] == "a-1"
    assert answer('{"jsonrpc":"2.0","id":null,"method":"status"}')["id"] is None


def test_a_notification_gets_no_answer_but_runs() -> None:
    calls.clear()
    assert answer('{"jsonrpc":"2.0","method":"read","params":{"path":"areas/x.html"}}') is None
    assert calls and calls[0][0] == "read"


def test_a_failing_notification_gets_no_answer() -> None:
    assert (
        answer('{"jsonrpc":"2.0","method":"read","params":{"path":"areas/missing.html"}}') is None
    )
    assert answer('{"jsonrpc":"2.0","method":"nope"}') is None


def test_parse_error() -> None:
    got = answer('{"jsonrpc":"2.0","id":1,"method":')
    assert got["error"]["code"] == -32700
    assert got["id"] is None


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"1.0","id":1,"method":"status"}',
        '{"jsonrpc":"2.0","id":1,"method":5}',
        '{"jsonrpc":"2.0","id":1.5,"method":"status"}',
        '{"jsonrpc":"2.0","id":1,"method":"status","extra":true}',
        "42",
        '"status"',
    ],
)
def test_invalid_requests(line: str) -> None:
    got = answer(line)
    assert got["error"]["code"] == -32600


def test_invalid_request_keeps_the_id_when_it_can() -> None:
    assert answer('{"jsonrpc":"2.0","id":9}')["id"] == 9


def test_method_not_found_and_invalid_params() -> None:
    assert answer('{"jsonrpc":"2.0","id":1,"method":"nope"}')["error"]["code"] == -32601
    got = answer('{"jsonrpc":"2.0","id":1,"method":"read","params":{"path":3}}')
    assert got["error"]["code"] == -32602
    assert "$.path" in got["error"]["message"]
    got = answer('{"jsonrpc":"2.0","id":1,"method":"read","params":["x"]}')
    assert got["error"]["code"] == -32602


def test_domain_errors_carry_their_err_code() -> None:
    got = answer('{"jsonrpc":"2.0","id":1,"method":"read","params":{"path":"areas/missing.html"}}')
    assert got["error"] == {
        "code": -32000,
        "message": "no memory at areas/missing.html",
        "data": {"code": "ERR_PATH_NOT_FOUND", "details": {"path": "areas/missing.html"}},
    }


def test_an_unexpected_exception_is_an_internal_error_that_leaks_nothing() -> None:
    got = answer('{"jsonrpc":"2.0","id":1,"method":"read","params":{"path":"areas/boom.html"}}')
    assert got["error"]["code"] == -32603
    assert "secret" not in json.dumps(got)


def test_a_batch_is_answered_with_an_array_in_order_without_notifications() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "status"},
        {"jsonrpc": "2.0", "method": "status"},
        {"jsonrpc": "2.0", "id": 2, "method": "read", "params": {"path": "areas/p.html"}},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
        5,
    ]
    got = answer(json.dumps(batch))
    assert [a.get("id") for a in got] == [1, 2, 3, None]
    assert got[1]["result"] == {"path": "areas/p.html"}
    assert got[2]["error"]["code"] == -32601
    assert got[3]["error"]["code"] == -32600


def test_a_batch_of_notifications_gets_no_answer() -> None:
    assert answer('[{"jsonrpc":"2.0","method":"status"},{"jsonrpc":"2.0","method":"x"}]') is None


def test_an_empty_batch_is_invalid() -> None:
    got = answer("[]")
    assert got["error"]["code"] == -32600


def test_a_broken_batch_is_a_parse_error() -> None:
    assert answer('[{"jsonrpc":"2.0","id":1,"method":"status"},')["error"]["code"] == -32700


def test_session_apply_decodes_tagged_ops() -> None:
    calls.clear()
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session.apply",
            "params": {
                "session": "s1",
                "ops": [
                    {"op": "label", "path": "areas/a.html", "entity": "service:x"},
                    {"op": "put", "path": "areas/b.html", "html": "<html></html>"},
                ],
            },
        }
    )
    got = answer(line)
    assert got["error"]["data"]["code"] == "ERR_SESSION_LOCKED"
    request = calls[-1][1]
    assert [type(op).__name__ for op in request.ops] == ["Label", "Put"]
    bad = line.replace('"label"', '"relabel"')
    assert answer(bad)["error"]["code"] == -32602
