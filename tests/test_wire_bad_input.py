"""Hostile input through the real daemon's socket: every line gets a typed answer, the connection
stays, and the requests pipelined behind a bad line are answered.

One daemon serves the module. Each test writes raw lines on one connection and reads the answers
back in order; the last line is always a ``status`` whose answer proves the connection survived.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from daemon_support import Daemon, connect, make_store, read_line, short_socket_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_support import TYPED_ERRORS, any_params, params_are_wrong

from headd.daemon.methods import METHODS
from headd.wire.nesting import MAX_DEPTH

STATUS = b'{"jsonrpc":"2.0","id":"behind","method":"status"}\n'


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    store = tmp_path_factory.mktemp("wire") / "store"
    make_store(store)
    served = Daemon(store, short_socket_dir() / "head.sock").wait_ready(timeout=60)
    yield served
    served.stop()


def exchange(sock: socket.socket, lines: list[bytes]) -> list[Any]:
    """Send every line at once (pipelined), then a status; the answers, the status's last."""
    sock.sendall(b"".join(line.rstrip(b"\n") + b"\n" for line in lines) + STATUS)
    buf = bytearray()
    answers: list[Any] = []
    while True:
        line = read_line(sock, buf)
        assert line, "the daemon closed the connection"
        answer = json.loads(line)
        answers.append(answer)
        if isinstance(answer, dict) and answer.get("id") == "behind":
            assert "result" in answer
            return answers[:-1]


def test_a_thousand_levels_get_an_error_and_the_requests_behind_are_answered(
    daemon: Daemon,
) -> None:
    deep = [
        b"[" * 1000,
        b"[" * 1000 + b"]" * 1000,
        b'{"a":' * 1000 + b"1" + b"}" * 1000,
        b'{"jsonrpc":"2.0","id":7,"method":"search","params":{"query":"x","filter":'
        + b'{"a":' * 1000
        + b"1"
        + b"}" * 1001
        + b"}",
    ]
    with connect(daemon.socket_path) as sock:
        answers = exchange(sock, deep)
        assert [a["error"]["code"] for a in answers] == [-32600] * len(deep)
        assert all(a["error"]["data"] == {"max_depth": MAX_DEPTH} for a in answers)
        # and the connection still serves a real request
        (again,) = exchange(sock, [b'{"jsonrpc":"2.0","id":8,"method":"skipped"}'])
        assert again["id"] == 8 and "files" in again["result"]


def test_nesting_at_the_bound_is_decoded_as_usual(daemon: Daemon) -> None:
    params = b'{"query":"x","filter":{"types":["fact"]}}'
    shallow = b'{"jsonrpc":"2.0","id":1,"method":"search","params":' + params + b"}"
    with connect(daemon.socket_path) as sock:
        (answer,) = exchange(sock, [shallow, b"[" * MAX_DEPTH + b"]" * MAX_DEPTH])[:1]
        assert answer["id"] == 1 and "hits" in answer["result"]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(
    method=st.sampled_from(sorted(METHODS)),
    params=any_params,
)
def test_every_method_given_wrong_types_answers_minus_32602(
    daemon: Daemon, method: str, params: Any
) -> None:
    if not params_are_wrong(method, params):
        return  # a valid request would run the method: that is not this test's business
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    with connect(daemon.socket_path) as sock:
        (answer,) = exchange(sock, [line.encode()])
    assert answer["error"]["code"] == -32602, answer


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    junk=st.lists(
        st.binary(max_size=120).map(lambda b: b.replace(b"\n", b""))
        | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass"))
        | st.integers(0, 2500).map(lambda n: b"[" * n),
        min_size=1,
        max_size=4,
    )
)
def test_junk_lines_get_typed_errors_and_lose_nothing(daemon: Daemon, junk: list[bytes]) -> None:
    lines = [line.replace(b"\n", b"") for line in junk]
    with connect(daemon.socket_path) as sock:
        answers = exchange(sock, lines)
    for answer in answers:
        for item in answer if isinstance(answer, list) else [answer]:
            if "error" in item:
                assert item["error"]["code"] in TYPED_ERRORS, item


def test_the_module_daemon_logged_no_internal_error(daemon: Daemon) -> None:
    with connect(daemon.socket_path) as sock:
        exchange(sock, [])
    assert "Traceback" not in daemon.log()
