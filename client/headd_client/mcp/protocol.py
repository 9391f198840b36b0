"""The MCP server's sans-I/O core: one JSON-RPC message in, at most one answer out.

Two protocol eras share this core. The handshake era (2024-11-05 … 2025-11-25) opens with
``initialize`` and its ``notifications/initialized``; the stateless 2026-07-28 era sends no
handshake: every request carries its protocol version and client capabilities in
``params._meta`` (``io.modelcontextprotocol/…`` keys), and a client probes with
``server/discover``. The first request decides a connection's era, as the official SDK's servers
decide it; a request of the other era afterwards is refused. Results of the stateless era carry
``resultType`` and the server-info stamp; list results carry the caching pair (``ttlMs``,
``cacheScope``), which stay 0 and private because every answer is as fresh as the branch.

The methods themselves live behind ``Handlers`` (``tools.py``, ``resources.py``), so this module
knows the protocol and nothing of memories.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from headd_client.json_types import JsonInObject, JsonObject, JsonValue

HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: Methods whose results a 2026-07-28 client may cache (they carry ``ttlMs``/``cacheScope``).
_CACHEABLE = frozenset(
    {"server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list"}
)


class McpError(Exception):
    """A JSON-RPC error answer (not a tool failure: those are results with ``isError``)."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Handlers(Protocol):
    """What the server does; each returns the method's result object."""

    def list_tools(self) -> list[JsonValue]: ...

    def call_tool(self, name: str, arguments: JsonInObject) -> JsonObject: ...

    def list_resource_templates(self) -> list[JsonValue]: ...

    def read_resource(self, uri: str) -> JsonObject: ...


@dataclass
class McpSession:
    """One stdio connection's protocol state."""

    handlers: Handlers
    name: str = "headd"
    version: str = "0"
    instructions: str | None = None
    era: str | None = None  # "handshake" or "modern", fixed by the first request
    protocol_version: str | None = None
    initialized: bool = False

    # -- entry ---------------------------------------------------------------------------

    def handle(self, message: object) -> JsonObject | None:
        """The answer to one decoded message, or None for a notification."""
        if not isinstance(message, Mapping) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        request_id = message.get("id")
        if not isinstance(method, str):
            return None if "id" not in message else _error(request_id, INVALID_REQUEST, "no method")
        params = message.get("params")
        if params is not None and not isinstance(params, Mapping):
            return _error(request_id, INVALID_PARAMS, "params must be an object")
        params = params or {}
        if "id" not in message:
            self._notify(method)
            return None
        try:
            version = self._route(method, params)
            result = self._dispatch(method, params, version)
        except McpError as exc:
            return _error(request_id, exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": request_id, "result": self._stamp(method, result, version)}

    def _notify(self, method: str) -> None:
        if method == "notifications/initialized":
            self.initialized = True

    # -- eras ------------------------------------------------------------------------------

    def _route(self, method: str, params: Mapping[str, JsonValue]) -> str | None:
        """The protocol version this request speaks (None before a handshake's answer)."""
        meta = params.get("_meta")
        enveloped = isinstance(meta, Mapping) and VERSION_KEY in meta
        if method == "initialize":
            if self.era == "modern":
                requested = params.get("protocolVersion")
                raise McpError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "this connection serves the 2026-07-28 protocol; initialize is not accepted",
                    {"supported": list(MODERN_VERSIONS), "requested": requested},
                )
            self.era = "handshake"
            return None
        if enveloped:
            assert isinstance(meta, Mapping)
            if self.era == "handshake":
                raise McpError(
                    INVALID_REQUEST,
                    "this connection serves the handshake protocol; requests carrying the "
                    "2026-07-28 envelope are not accepted on it",
                )
            if CAPABILITIES_KEY not in meta:
                raise McpError(
                    INVALID_PARAMS, f"params._meta is missing the required key {CAPABILITIES_KEY}"
                )
            version = meta[VERSION_KEY]
            if not isinstance(version, str):
                raise McpError(INVALID_PARAMS, "the protocol version must be a string")
            if version not in MODERN_VERSIONS:
                raise McpError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    f"unsupported protocol version {version}",
                    {"supported": list(MODERN_VERSIONS), "requested": version},
                )
            self.era = "modern"
            return version
        if method == "server/discover":
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "server/discover needs the 2026-07-28 envelope in params._meta",
                {"supported": [*HANDSHAKE_VERSIONS, *MODERN_VERSIONS]},
            )
        if self.era == "modern":
            raise McpError(INVALID_PARAMS, f"params._meta must carry {VERSION_KEY}")
        if self.era is None:
            # A client that skipped the handshake: answer in the newest handshake revision.
            self.era = "handshake"
            self.protocol_version = LATEST_HANDSHAKE
        return self.protocol_version

    # -- methods ---------------------------------------------------------------------------

    def _capabilities(self) -> JsonObject:
        return {
            "tools": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
        }

    def _dispatch(
        self, method: str, params: Mapping[str, JsonValue], version: str | None
    ) -> JsonObject:
        handlers = self.handlers
        match method:
            case "initialize":
                requested = params.get("protocolVersion")
                agreed = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
                self.protocol_version = agreed
                out: JsonObject = {
                    "protocolVersion": agreed,
                    "capabilities": self._capabilities(),
                    "serverInfo": {"name": self.name, "version": self.version},
                }
                if self.instructions:
                    out["instructions"] = self.instructions
                return out
            case "server/discover":
                found: JsonObject = {
                    "supportedVersions": list(MODERN_VERSIONS),
                    "capabilities": self._capabilities(),
                }
                if self.instructions:
                    found["instructions"] = self.instructions
                return found
            case "ping":
                return {}
            case "tools/list":
                return {"tools": handlers.list_tools()}
            case "tools/call":
                name = params.get("name")
                arguments = params.get("arguments") or {}
                if not isinstance(name, str):
                    raise McpError(INVALID_PARAMS, "tools/call needs a tool name")
                if not isinstance(arguments, Mapping):
                    raise McpError(INVALID_PARAMS, "tool arguments must be an object")
                return handlers.call_tool(name, arguments)
            case "resources/list":
                return {"resources": []}
            case "resources/templates/list":
                return {"resourceTemplates": handlers.list_resource_templates()}
            case "resources/read":
                uri = params.get("uri")
                if not isinstance(uri, str):
                    raise McpError(INVALID_PARAMS, "resources/read needs a uri")
                return handlers.read_resource(uri)
            case "prompts/list":
                return {"prompts": []}
            case "logging/setLevel":
                return {}
        raise McpError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _stamp(self, method: str, result: JsonObject, version: str | None) -> JsonObject:
        if version not in MODERN_VERSIONS:
            return result
        out = dict(result)
        out.setdefault("resultType", "complete")
        if method in _CACHEABLE:
            out.setdefault("ttlMs", 0)
            out.setdefault("cacheScope", "private")
        stamped = out.get("_meta")
        meta: JsonObject = dict(stamped) if isinstance(stamped, dict) else {}
        meta.setdefault(SERVER_INFO_KEY, {"name": self.name, "version": self.version})
        out["_meta"] = meta
        return out


def _error(request_id: JsonValue, code: int, message: str, data: JsonValue = None) -> JsonObject:
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def parse_error() -> JsonObject:
    return _error(None, PARSE_ERROR, "parse error: not JSON")


def handshake_lines(client_name: str, version: str = "2025-06-18") -> list[JsonObject]:
    """A client's opening of a handshake-era connection: ``initialize`` (id 1), the
    ``initialized`` notification and ``tools/list`` (id 2), for one-shot probes."""
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": client_name, "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
