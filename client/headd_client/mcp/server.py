"""``headctl mcp``: the stdio MCP server, one JSON-RPC message per line on stdin and stdout.

stdout carries the protocol alone: before anything else runs, file descriptor 1 is moved aside
for the protocol and replaced by stderr, so a stray print or a child process can never corrupt
the stream. Logs go to stderr. Messages are answered one at a time in arrival order; the daemon
connection is made in the background at start (spawning a daemon when none answers, unless
``--no-spawn``), so ``initialize`` and ``tools/list`` answer at once and the first tool call
usually finds the connection ready.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import BinaryIO

from headd_client import calls
from headd_client.json_types import JsonInObject, JsonObject, JsonValue
from headd_client.mcp.displaced import (
    DisplacedWatch,
    with_notice,
    with_replayed,
)
from headd_client.mcp.protocol import McpSession, parse_error
from headd_client.mcp.resources import read_resource, resource_templates
from headd_client.mcp.spawn import DaemonLink
from headd_client.mcp.tools import Tools, tool_definitions

log = logging.getLogger("headctl.mcp")

INSTRUCTIONS = (
    "Long-term memory kept as a git repository of HTML files, served from the branch tip. "
    "Search (memory_search) before answering from memory; memory_read a path before quoting it; "
    "write one durable fact per memory (memory_write, memory_write_batch for more than three); "
    "replace a fact with memory_correct rather than a second memory."
)


class BridgeHandlers:
    """The protocol's handlers over the tools and resources."""

    def __init__(self, link: DaemonLink, store: Path) -> None:
        self.link = link
        self.tools = Tools(link, store)
        self.store = store
        self.watch = DisplacedWatch()

    def list_tools(self) -> list[JsonValue]:
        return tool_definitions()

    def call_tool(self, name: str, arguments: JsonInObject) -> JsonObject:
        result = self.tools.call(name, arguments)
        self.watch.note(result)
        if not self.watch.watching():
            return result
        try:
            status = self.link.run(calls.status())
        except Exception:  # the answer itself stands; the next call asks again
            return result
        replays = self.watch.replayed(self.store, status.sha)
        result = with_replayed(result, replays) if replays else result
        displaced = self.watch.displaced(status.remote)
        return with_notice(result, displaced) if displaced else result

    def list_resource_templates(self) -> list[JsonValue]:
        return resource_templates()

    def read_resource(self, uri: str) -> JsonObject:
        return read_resource(self.link, uri)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("headd")
    except PackageNotFoundError:
        return "0+unknown"


def serve(link: DaemonLink, store: Path, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer messages from ``stdin`` on ``stdout`` until end of input."""
    session = McpSession(
        BridgeHandlers(link, store), name="headd", version=_version(), instructions=INSTRUCTIONS
    )
    warm = threading.Thread(target=_warm, args=(link,), name="headctl-mcp-connect", daemon=True)
    warm.start()
    for line in iter(stdin.readline, b""):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            _write(stdout, parse_error())
            continue
        if isinstance(message, list):
            answers: list[JsonValue] = [
                a for a in (session.handle(m) for m in message) if a is not None
            ]
            if answers:
                _write(stdout, answers)
            continue
        answer = session.handle(message)
        if answer is not None:
            _write(stdout, answer)
    link.close()
    return 0


def _warm(link: DaemonLink) -> None:
    try:
        link.client()
    except Exception as exc:  # reported again, as a tool failure, by the first call that needs it
        log.warning("daemon not reachable yet: %s", getattr(exc, "message", exc))


def _write(stdout: BinaryIO, message: JsonValue) -> None:
    stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    stdout.flush()


def run_mcp(store: Path, socket_path: Path, *, spawn: bool, environ: dict[str, str]) -> int:
    """The ``headctl mcp`` entry: protocol on the real stdout, everything else on stderr."""
    logging.basicConfig(
        level=os.environ.get("HEADCTL_LOG_LEVEL", "WARNING"),
        stream=sys.stderr,
        format="headctl mcp: %(message)s",
    )
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    stdout = os.fdopen(protocol_fd, "wb", buffering=0)
    sys.stdout = sys.stderr
    link = DaemonLink(store, socket_path, spawn=spawn, environ=environ)
    try:
        return serve(link, store, sys.stdin.buffer, stdout)
    finally:
        stdout.close()
