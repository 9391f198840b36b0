"""The MCP core without I/O: which era a connection speaks, and what each era's answers carry."""

from __future__ import annotations

from typing import Any

import pytest
from headd_client.mcp.protocol import (
    CAPABILITIES_KEY,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_INFO_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    VERSION_KEY,
    McpSession,
)
from headd_client.mcp.tools import check_arguments_against, tool_definitions


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def list_tools(self) -> list[dict[str, Any]]:
        return [{"name": "t", "inputSchema": {"type": "object"}}]

    def call_tool(self, name: str, arguments: Any) -> dict[str, Any]:
        self.calls.append((name, dict(arguments)))
        return {"content": [], "isError": False}

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return []

    def read_resource(self, uri: str) -> dict[str, Any]:
        return {"contents": []}


def envelope(version: str = "2026-07-28", **params: Any) -> dict[str, Any]:
    return {**params, "_meta": {VERSION_KEY: version, CAPABILITIES_KEY: {}}}


def request(method: str, params: Any = None, rid: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_handshake_agrees_on_each_handshake_revision(version: str) -> None:
    session = McpSession(Recorder())
    answer = session.handle(request("initialize", {"protocolVersion": version, "capabilities": {}}))
    assert answer is not None and answer["result"]["protocolVersion"] == version
    assert session.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    listed = session.handle(request("tools/list", rid=2))
    assert listed is not None and "resultType" not in listed["result"]


def test_an_unknown_handshake_revision_gets_the_newest() -> None:
    answer = McpSession(Recorder()).handle(request("initialize", {"protocolVersion": "2099-01-01"}))
    assert answer is not None and answer["result"]["protocolVersion"] == "2025-11-25"


def test_stateless_era_stamps_results_and_refuses_initialize_after() -> None:
    session = McpSession(Recorder(), name="headd", version="9")
    found = session.handle(request("server/discover", envelope()))
    assert found is not None
    result = found["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["resultType"] == "complete" and result["ttlMs"] == 0
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "headd", "version": "9"}
    called = session.handle(request("tools/call", envelope(name="t", arguments={"a": 1}), rid=2))
    assert called is not None and called["result"]["resultType"] == "complete"
    assert "ttlMs" not in called["result"]
    late = session.handle(request("initialize", {"protocolVersion": "2025-06-18"}, rid=3))
    assert late is not None and late["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION


def test_eras_do_not_mix_and_bad_versions_are_named() -> None:
    legacy = McpSession(Recorder())
    legacy.handle(request("initialize", {"protocolVersion": "2025-06-18"}))
    mixed = legacy.handle(request("tools/list", envelope(), rid=2))
    assert mixed is not None and mixed["error"]["code"] == INVALID_REQUEST
    odd = McpSession(Recorder()).handle(request("tools/list", envelope("2030-01-01")))
    assert odd is not None and odd["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert odd["error"]["data"]["requested"] == "2030-01-01"
    probe = McpSession(Recorder()).handle(request("server/discover", {}))
    assert probe is not None and probe["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION


def test_unknown_methods_and_bad_messages() -> None:
    session = McpSession(Recorder())
    answer = session.handle(request("nope"))
    assert answer is not None and answer["error"]["code"] == METHOD_NOT_FOUND
    assert session.handle({"id": 1, "method": "x"})["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
    assert session.handle({"jsonrpc": "2.0", "method": "notifications/cancelled"}) is None


def test_argument_checks_follow_memhtml_schemas() -> None:
    schemas = {t["name"]: t["inputSchema"] for t in tool_definitions()}
    write = schemas["memory_write"]
    assert (
        check_arguments_against({"title": "x", "memory_type": "semantic", "body": "y"}, write) == []
    )
    problems = check_arguments_against({"title": "x", "memory_type": "arc", "extra": 1}, write)
    assert any("memory_type" in p for p in problems) and any("extra" in p for p in problems)
    assert check_arguments_against({}, write) == [
        "missing required argument `title`",
        "missing required argument `memory_type`",
    ]
    batch = schemas["memory_write_batch"]
    assert check_arguments_against({"ops": [{"title": "x"}]}, batch) == [
        "argument `ops` does not match array"
    ]
