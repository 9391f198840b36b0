"""The framer, the JSON-RPC layer and the method decoders under hostile input, in process.

Whatever bytes arrive, every request line gets one typed JSON-RPC error or a result: never an
exception out of the line's answer (which would drop the connection and the requests pipelined
behind it) and never -32603 (which says the daemon failed, not the caller). The dispatch here is
the daemon's own decoding (``decode_request``); a request that decodes is answered ``"ok"``
without running a handler, so the fuzz pins the wire and the decoders, and the socket tests
(``test_wire_bad_input.py``) pin the same through the real daemon.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.wire import TYPED_ERRORS, any_params, params_are_wrong

from headd.daemon.json_rpc import answer_line
from headd.wire.framing import LineFramer, Oversized, frame
from headd.wire.methods import METHODS, decode_request
from headd.wire.nesting import MAX_DEPTH, nesting_depth, nests_deeper_than


async def _dispatch(method: str, params: msgspec.Raw | None) -> Any:
    decode_request(method, params)
    return "ok"


def answers_of(stream: bytes, chunk: int = 7) -> list[Any]:
    """Frame ``stream`` in chunks and answer every line, as one connection of the daemon does."""
    framer = LineFramer(limit=1 << 20)
    out: list[Any] = []

    async def run() -> None:
        for start in range(0, len(stream), chunk):
            for line in framer.feed(stream[start : start + chunk]):
                assert not isinstance(line, Oversized)
                if not line.strip():
                    continue
                answer = await answer_line(line, _dispatch)
                if answer is not None:
                    out.append(json.loads(answer))

    asyncio.run(run())
    return out


def assert_typed(answer: Any) -> None:
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        if "error" in item:
            assert item["error"]["code"] in TYPED_ERRORS, item
        else:
            assert item["result"] == "ok"


STATUS = b'{"jsonrpc":"2.0","id":"behind","method":"status"}'


def nested(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    if kind == "object":
        return b'{"a":' * depth + b"1" + b"}" * depth
    if kind == "open":
        return b"[" * depth
    return b'{"jsonrpc":"2.0","id":1,"method":"search","params":' + nested(depth, "object") + b"}"


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 3000), kind=st.sampled_from(["array", "object", "open", "in-params"]))
def test_any_nesting_is_answered_and_the_request_behind_it_too(depth: int, kind: str) -> None:
    answers = answers_of(frame(nested(depth, kind)) + frame(STATUS), chunk=4096)
    assert answers[-1] == {"jsonrpc": "2.0", "id": "behind", "result": "ok"}
    for answer in answers[:-1]:
        assert_typed(answer)
    if depth > MAX_DEPTH + 1:
        assert answers[0]["error"]["code"] == -32600


def test_a_thousand_levels_are_refused_before_decoding() -> None:
    for line in (b"[" * 1000, b'{"a":' * 1000 + b"1" + b"}" * 1000):
        (answer, behind) = answers_of(frame(line) + frame(STATUS), chunk=1 << 16)
        assert answer["error"]["code"] == -32600
        assert answer["error"]["data"] == {"max_depth": MAX_DEPTH}
        assert behind["result"] == "ok"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")))
def test_arbitrary_bytes_get_typed_answers(line: bytes) -> None:
    answers = answers_of(frame(line) + frame(STATUS))
    assert answers[-1]["id"] == "behind"
    for answer in answers[:-1]:
        assert_typed(answer)


unicode_text = st.text(max_size=20)


@settings(max_examples=200, deadline=None)
@given(method=unicode_text, key=unicode_text, value=unicode_text, lone=st.integers(0xD800, 0xDFFF))
def test_unicode_anywhere_gets_typed_answers(method: str, key: str, value: str, lone: int) -> None:
    surrogate = f"\\u{lone:04x}".encode()
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {key: value}}).encode(),
        json.dumps(
            {"jsonrpc": "2.0", "id": 5, "method": "read", "params": {"path": value}},
            ensure_ascii=False,
        ).encode(),
        b'{"jsonrpc":"2.0","id":6,"method":"read","params":{"path":"areas/\xff\xfe.html"}}',
        b'{"jsonrpc":"2.0","id":2,"method":"' + surrogate + b'"}',
        b'{"jsonrpc":"2.0","id":3,"method":"read","params":{"path":"' + surrogate + b'"}}',
        b'{"jsonrpc":"2.0","id":"' + surrogate + b'","method":"status"}',
        b'{"jsonrpc":"2.0","id":4,"method":"search","params":{"query":"' + surrogate + b'"}}',
    ]
    answers = answers_of(b"".join(frame(line) for line in lines) + frame(STATUS))
    assert answers[-1]["id"] == "behind"
    for answer in answers[:-1]:
        assert_typed(answer)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    method=st.sampled_from(sorted(METHODS)),
    params=any_params,
)
def test_every_method_with_wrong_types_answers_invalid_params(method: str, params: Any) -> None:
    try:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, allow_nan=False
        )
    except (TypeError, ValueError):
        return
    expected = params_are_wrong(method, params)
    (answer, behind) = answers_of(frame(body.encode()) + frame(STATUS), chunk=64)
    assert behind["id"] == "behind"
    if expected:
        assert answer["error"]["code"] == -32602, answer
    else:
        assert_typed(answer)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b":", b","])))
def test_the_depth_bound_counts_what_a_decoder_would_recurse_on(parts: list[bytes]) -> None:
    text = b"".join(parts)
    depth, level, in_string, escaped = 0, 0, False, False
    for byte in text:
        char = bytes([byte])
        if in_string:
            if escaped:
                escaped = False
            elif char == b"\\":
                escaped = True
            elif char == b'"':
                in_string = False
            continue
        if char == b'"':
            in_string = True
        elif char in (b"[", b"{"):
            level += 1
            depth = max(depth, level)
        elif char in (b"]", b"}"):
            level -= 1
    if not in_string:  # an unterminated string is cut by the decoder before any bracket in it
        assert nesting_depth(text) == depth
    assert nests_deeper_than(text, 3) == (nesting_depth(text) > 3)
