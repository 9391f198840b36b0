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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.daemon import Daemon, connect, read_line, short_socket_dir
from support.stores import make_store
from support.wire import TYPED_ERRORS, any_params, params_are_wrong

from headd.wire.methods import METHODS
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


# -- paths: one rule for every method and every op ----------------------------------------

HELD = "areas/inbox/user-prefers-short-answers.html"
BAD_PATHS = {
    "nul": "areas/inbox/x\x00.html",
    "newline": "areas/inbox/x\n.html",
    "carriage return": "areas/inbox/x\r.html",
    "other control": "areas/inbox/x\x1b.html",
    "delete": "areas/inbox/x\x7f.html",
    "backslash": "areas\\inbox\\x.html",
    "long component": "areas/inbox/" + "é" * 128 + ".html",
    "long path": "areas/" + "/".join(["d" * 200] * 21) + "/x.html",
    "dot-dot": "areas/../x.html",
    "dot-dot after normalising": "//areas//..//..//etc/passwd",
    "outside the buckets": "elsewhere/x.html",
    "a bucket alone": "areas",
}


def call(sock: socket.socket, method: str, params: dict[str, Any]) -> Any:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    (answer,) = exchange(sock, [line.encode()])
    return answer


def requests_naming(path: str, session: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """One request per place a memory path can sit on the wire, each naming ``path`` there."""
    href = "/" + path
    html = "<!doctype html><title>x</title>"

    def apply(*ops: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("session.apply", {"session": session, "ops": list(ops)})

    return {
        "read": ("read", {"path": path}),
        "read in a session": ("read", {"path": path, "session": session}),
        "resolve": ("resolve", {"path": path}),
        "inbound": ("inbound", {"href": href}),
        "reinforce": ("reinforce", {"paths": [HELD, path]}),
        "put": apply({"op": "put", "path": path, "html": html}),
        "archive": apply({"op": "archive", "path": path}),
        "archive to": apply({"op": "archive", "path": HELD, "to": path}),
        "move": apply({"op": "move", "path": path, "to": "areas/inbox/y.html"}),
        "move to": apply({"op": "move", "path": HELD, "to": path}),
        "link": apply({"op": "link", "path": path, "rel": "related", "href": "/" + HELD}),
        "link href": apply({"op": "link", "path": HELD, "rel": "related", "href": href}),
        "unlink href": apply({"op": "unlink", "path": HELD, "rel": "related", "href": href}),
        "label": apply({"op": "label", "path": path, "entity": "tool:x"}),
        "unlabel": apply({"op": "unlabel", "path": path, "entity": "tool:x"}),
        "write": apply({"op": "write", "title": "T", "type": "fact", "claim": "C", "path": path}),
        "second op": apply(
            {"op": "label", "path": HELD, "entity": "tool:x"},
            {"op": "put", "path": path, "html": html},
        ),
    }


@pytest.fixture(scope="module")
def session(daemon: Daemon) -> str:
    with connect(daemon.socket_path) as sock:
        return str(call(sock, "session.open", {"id": "paths"})["result"]["session"])


@pytest.mark.parametrize("rule", sorted(BAD_PATHS))
def test_a_bad_path_is_invalid_params_in_every_method_and_op(
    daemon: Daemon, session: str, rule: str
) -> None:
    with connect(daemon.socket_path) as sock:
        for where, (method, params) in requests_naming(BAD_PATHS[rule], session).items():
            answer = call(sock, method, params)
            assert "error" in answer, f"{rule} in {where}: answered {answer['result']}"
            assert answer["error"]["code"] == -32602, (rule, where, answer)
            assert answer["error"]["data"]["rule"], (rule, where)
        listed = call(sock, "session.list", {})["result"]
        (mine,) = [s for s in listed["sessions"] if s["session"] == session]
        assert mine["ops"] == 0, "a refused apply appended nothing to the session"


def test_the_error_names_the_field_that_holds_the_bad_path(daemon: Daemon, session: str) -> None:
    with connect(daemon.socket_path) as sock:
        ops = [
            {"op": "label", "path": HELD, "entity": "tool:x"},
            {"op": "move", "path": HELD, "to": "areas/x\n.html"},
        ]
        answer = call(sock, "session.apply", {"session": session, "ops": ops})
    assert answer["error"]["data"]["field"] == "ops[1].to"
    assert "control character" in answer["error"]["message"]


def test_good_paths_still_answer_as_they_did(daemon: Daemon) -> None:
    with connect(daemon.socket_path) as sock:
        assert call(sock, "read", {"path": HELD})["result"]["record"]["path"] == HELD
        missing = call(sock, "read", {"path": "areas/inbox/no-such-memory.html"})
        assert missing["result"]["record"] is None
        assert call(sock, "inbound", {"href": "/" + HELD})["result"]["paths"] == []
        assert call(sock, "resolve", {"path": HELD})["result"]["path"] == HELD


@pytest.mark.parametrize("bad", ["abc\n", "abc\r", "abc\x00", "a/b", "../escape", ""])
def test_a_session_id_with_a_trailing_newline_or_other_junk_is_refused(
    daemon: Daemon, bad: str
) -> None:
    with connect(daemon.socket_path) as sock:
        answer = call(sock, "session.open", {"id": bad})
        assert answer["error"]["code"] == -32000, answer
        assert answer["error"]["data"]["code"] == "ERR_INVALID_OP"
        assert not any(
            s["session"] == bad for s in call(sock, "session.list", {})["result"]["sessions"]
        )


READ_ONLY = {
    "read": ["path"],
    "resolve": ["path"],
    "inbound": ["href"],
    "by_entity": ["entity"],
    "by_frame_key": ["key"],
    "by_content_hash": ["hash"],
    "search": ["query"],
    "traces.search": ["query"],
    "traces.show": ["session"],
}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(sorted(READ_ONLY)),
    text=st.text(max_size=60)
    | st.sampled_from(["", " ", "/", "//", "areas/", "/areas/../x", "\u2028", "a" * 5000]),
    at=st.none() | st.text(max_size=45) | st.sampled_from(["HEAD~1", "main", "0" * 40, "@{-1}"]),
)
def test_well_typed_strange_values_never_answer_internal_error(
    daemon: Daemon, method: str, text: str, at: str | None
) -> None:
    params: dict[str, Any] = {name: text for name in READ_ONLY[method]}
    if at is not None and method not in ("traces.search", "traces.show"):
        params["at"] = at
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    with connect(daemon.socket_path) as sock:
        (answer,) = exchange(sock, [line.encode()])
    if "error" in answer:
        assert answer["error"]["code"] in TYPED_ERRORS, answer


def test_the_module_daemon_logged_no_internal_error(daemon: Daemon) -> None:
    """Last in the module: nothing above made the daemon log a traceback (a -32603)."""
    with connect(daemon.socket_path) as sock:
        exchange(sock, [])
    assert "Traceback" not in daemon.log()
