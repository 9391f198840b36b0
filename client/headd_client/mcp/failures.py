"""Tool failures as agents read them: a stable ``ERR_…`` code, what went wrong, the next call.

Every failure of a tool call becomes a result with ``isError: true`` whose text is
``ERR_CODE: message. Try: hint``, never a stack trace. The hints are phrased as calls an agent
can make next; the codes are memhtml's where memhtml has one, so an agent written against
memhtml's server branches the same way here.
"""

from __future__ import annotations

from collections.abc import Mapping

from headd.errors import HeaddError, RpcError

HINTS: dict[str, str] = {
    "ERR_PATH_NOT_FOUND": (
        "call memory_resolve on the path you cited (a correction or an eviction may have moved "
        "it); call memory_search with a query for what you were looking for; call memory_list "
        "to page the corpus by type or workspace"
    ),
    "ERR_INVALID_MEMORY": (
        "fix the violated constraint named above and call the same tool again; nothing was "
        "written and no commit was made"
    ),
    "ERR_INVALID_PARAMS": "fix the argument named above (see the tool's input schema) and call again",
    "ERR_DUPLICATE_CONTENT": "call memory_read on the existing path; nothing was written",
    "ERR_WRITE_CONFLICT": (
        "call memory_read on the path to get its current content; call memory_correct to "
        "replace a fact, or write without `path` to let placement choose a free one"
    ),
    "ERR_DIRTY_TREE": "commit or stash the uncommitted edits in the store, then call again",
    "ERR_DAEMON_UNAVAILABLE": (
        "start the daemon (headd --store STORE) or restart this MCP server without --no-spawn, "
        "then call again"
    ),
    "ERR_UNSUPPORTED": "call again without the argument named above",
    "ERR_UNKNOWN_TOOL": "call tools/list for the tools this server has",
}
DEFAULT_HINT = "call memory_status to check the store, then call again"


class ToolFailure(Exception):
    """A tool call that did not do what was asked; becomes an ``isError`` result."""

    def __init__(
        self, code: str, message: str, details: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, object] = dict(details or {})

    def text(self) -> str:
        hint = HINTS.get(self.code, DEFAULT_HINT)
        return f"{self.code}: {_one_line(self.message)}. Try: {hint}"


def from_exception(exc: BaseException) -> ToolFailure:
    """The tool failure a daemon error (or an unexpected one) stands for."""
    if isinstance(exc, ToolFailure):
        return exc
    if isinstance(exc, HeaddError):
        code = "ERR_INVALID_MEMORY" if exc.code == "ERR_INVALID_OP" else exc.code
        return ToolFailure(code, exc.message, exc.details)
    if isinstance(exc, RpcError):
        return ToolFailure("ERR_INVALID_PARAMS", exc.message)
    return ToolFailure("ERR_INTERNAL", f"the bridge failed ({type(exc).__name__})")


def path_not_found(path: str) -> ToolFailure:
    return ToolFailure("ERR_PATH_NOT_FOUND", f"no memory at {path}", {"path": path})


def _one_line(text: str) -> str:
    return " ".join(text.split()).rstrip(".")
