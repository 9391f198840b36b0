"""The client's sans-I/O core: what it sends, and how answers become results or typed errors."""

from __future__ import annotations

import json

import pytest
from headd_client.protocol import (
    Answer,
    ClientProtocol,
    ErrorObject,
    exception_for,
    unwrap,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.errors import (
    DOMAIN_ERRORS,
    CallerError,
    Conflict,
    EnvironmentFailure,
    HeaddError,
    InvalidMemory,
    InvalidParams,
    MethodNotFound,
    ParseError,
    PathNotFound,
    ProtocolViolation,
    RpcError,
    from_wire,
)


def test_requests_carry_increasing_ids_and_drop_null_params() -> None:
    proto = ClientProtocol()
    id1, line1 = proto.request("search", {"query": "x", "at": None})
    id2, line2 = proto.request("status")
    assert (id1, id2) == (1, 2)
    assert line1.endswith(b"\n") and line1.count(b"\n") == 1
    assert json.loads(line1) == {
        "jsonrpc": "2.0",
        "method": "search",
        "params": {"query": "x"},
        "id": 1,
    }
    assert "params" not in json.loads(line2)


def test_notifications_have_no_id_and_batches_are_arrays() -> None:
    proto = ClientProtocol()
    assert "id" not in json.loads(proto.notification("status"))
    ids, line = proto.batch([("status", None), ("read", {"path": "a"})])
    assert [m["id"] for m in json.loads(line)] == ids


def test_receive_frames_answers_across_chunks() -> None:
    proto = ClientProtocol()
    data = b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}\n[{"jsonrpc":"2.0","id":2,"result":2}]\n'
    got = proto.receive(data[:10]) + proto.receive(data[10:50]) + proto.receive(data[50:])
    assert isinstance(got[0], Answer) and unwrap(got[0]) == {"a": 1}
    assert isinstance(got[1], list) and unwrap(got[1][0]) == 2


def test_an_answer_nested_past_the_bound_is_a_protocol_violation_not_a_recursion_error() -> None:
    deep = b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 2000 + b"]" * 2000 + b"}\n"
    with pytest.raises(ProtocolViolation, match="nested deeper"):
        ClientProtocol().receive(deep)


def test_garbage_from_the_daemon_is_a_protocol_violation() -> None:
    with pytest.raises(ProtocolViolation):
        ClientProtocol().receive(b"not json\n")


@settings(max_examples=40, deadline=None)
@given(code=st.sampled_from(sorted(DOMAIN_ERRORS)), message=st.text(max_size=30))
def test_every_domain_code_maps_back_to_its_class(code: str, message: str) -> None:
    details = {"path": "a.html", "violations": ["one", "two"]}
    exc = exception_for(ErrorObject(-32000, message, {"code": code, "details": details}))
    assert type(exc) is DOMAIN_ERRORS[code]
    assert isinstance(exc, HeaddError)
    assert exc.message == message and exc.details == details and exc.code == code


def test_invalid_memory_keeps_its_violations() -> None:
    sent = InvalidMemory("a.html", ["no article", "no mark"]).to_wire()
    exc = exception_for(ErrorObject(sent["code"], sent["message"], sent["data"]))
    assert isinstance(exc, InvalidMemory)
    assert exc.violations == ("no article", "no mark") and exc.path == "a.html"


@pytest.mark.parametrize("cls", sorted(DOMAIN_ERRORS.values(), key=lambda c: c.code))
def test_from_wire_inverts_to_wire(cls: type[HeaddError]) -> None:
    sent = (
        cls("a.html", ["one"]) if cls is InvalidMemory else cls("went wrong", {"path": "a.html"})
    ).to_wire()
    back = from_wire(sent)
    assert type(back) is cls and back.to_wire() == sent


def test_the_groups_say_who_is_at_fault_and_the_wire_codes_stay() -> None:
    by_group = {
        group: sorted(code for code, cls in DOMAIN_ERRORS.items() if issubclass(cls, group))
        for group in (CallerError, Conflict, EnvironmentFailure)
    }
    assert by_group == {
        CallerError: [
            "ERR_DISCRIMINATION_FAILED",
            "ERR_DUPLICATE_CONTENT",
            "ERR_INVALID_MEMORY",
            "ERR_INVALID_OP",
            "ERR_PATH_NOT_FOUND",
            "ERR_REBUILD_NO_EMBED_REFUSED",
            "ERR_SECRET",
            "ERR_SESSION_NOT_FOUND",
            "ERR_SLEEP_RUN_MERGED",
        ],
        Conflict: ["ERR_INDEX_STALE", "ERR_SESSION_LOCKED", "ERR_WRITE_CONFLICT"],
        EnvironmentFailure: [
            "ERR_DAEMON_RUNNING",
            "ERR_DAEMON_UNAVAILABLE",
            "ERR_EMBED_MODEL_MISMATCH",
            "ERR_GIT",
            "ERR_MODEL_UNAVAILABLE",
            "ERR_PROTOCOL",
            "ERR_SHUTTING_DOWN",
            "ERR_STORAGE",
        ],
    }
    assert sum(len(codes) for codes in by_group.values()) == len(DOMAIN_ERRORS)


def test_an_unknown_err_code_is_still_a_headd_error_with_that_code() -> None:
    exc = exception_for(ErrorObject(-32000, "m", {"code": "ERR_FUTURE", "details": {}}))
    assert isinstance(exc, HeaddError) and exc.code == "ERR_FUTURE"
    assert not isinstance(exc, PathNotFound)


@pytest.mark.parametrize(
    ("code", "cls"),
    [(-32700, ParseError), (-32601, MethodNotFound), (-32602, InvalidParams), (-1, RpcError)],
)
def test_rpc_codes_map_to_rpc_errors(code: int, cls: type[RpcError]) -> None:
    exc = exception_for(ErrorObject(code, "m"))
    assert type(exc) is cls


def test_unwrap_raises_the_error() -> None:
    answer = Answer(id=1, error=ErrorObject(-32000, "gone", {"code": "ERR_PATH_NOT_FOUND"}))
    with pytest.raises(PathNotFound, match="gone"):
        unwrap(answer)
