"""Every failure headd can name, each knowing its wire code.

The tree::

    HeaddError                      -32000, data.code = the ERR_ name below
    ├── InvalidMemory               ERR_INVALID_MEMORY (details.violations: every one)
    ├── PathNotFound                ERR_PATH_NOT_FOUND
    ├── DuplicateContent            ERR_DUPLICATE_CONTENT
    ├── WriteConflict               ERR_WRITE_CONFLICT
    ├── InvalidOp                   ERR_INVALID_OP (an overlay op that does not resolve)
    ├── GitFailure                  ERR_GIT
    ├── IndexStale                  ERR_INDEX_STALE
    ├── RebuildNoEmbedRefused       ERR_REBUILD_NO_EMBED_REFUSED (a rebuild would leave vectors stale)
    ├── EmbedModelMismatch          ERR_EMBED_MODEL_MISMATCH
    ├── ModelUnavailable            ERR_MODEL_UNAVAILABLE
    ├── StorageFailure              ERR_STORAGE
    ├── DiscriminationFailed        ERR_DISCRIMINATION_FAILED (the head gate refused)
    ├── SessionNotFound             ERR_SESSION_NOT_FOUND
    ├── SessionLocked               ERR_SESSION_LOCKED
    ├── DaemonRunning               ERR_DAEMON_RUNNING (a second daemon on one store)
    └── ShuttingDown                ERR_SHUTTING_DOWN (a long call cut short by the daemon's stop)

    RpcError                        the JSON-RPC standard codes, never a domain failure
    ├── ParseError                  -32700
    ├── InvalidRequest              -32600
    ├── MethodNotFound              -32601
    ├── InvalidParams               -32602
    └── InternalError               -32603

Messages never carry memory text or SQL parameters (contract section 3): a message names the
path, the operation or the rule, and ``details`` carries structured facts a client can act on.
"""

from __future__ import annotations

from typing import Any, ClassVar

DOMAIN_ERROR_CODE = -32000


class HeaddError(Exception):
    """A domain failure: JSON-RPC code -32000 with ``data = {code, details}``."""

    code: ClassVar[str] = "ERR_INTERNAL"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def to_wire(self) -> dict[str, Any]:
        return {
            "code": DOMAIN_ERROR_CODE,
            "message": self.message,
            "data": {"code": self.code, "details": self.details},
        }


class InvalidMemory(HeaddError):
    """A file that breaks the format; ``violations`` lists every one, never just the first."""

    code = "ERR_INVALID_MEMORY"

    def __init__(self, path: str, violations: list[str] | tuple[str, ...]) -> None:
        self.path = path
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__(
            f"invalid memory: {'; '.join(self.violations)}",
            {"path": path, "violations": list(self.violations)},
        )


class PathNotFound(HeaddError):
    code = "ERR_PATH_NOT_FOUND"


class DuplicateContent(HeaddError):
    code = "ERR_DUPLICATE_CONTENT"


class WriteConflict(HeaddError):
    code = "ERR_WRITE_CONFLICT"


class InvalidOp(HeaddError):
    code = "ERR_INVALID_OP"


class GitFailure(HeaddError):
    code = "ERR_GIT"


class IndexStale(HeaddError):
    code = "ERR_INDEX_STALE"


class RebuildNoEmbedRefused(HeaddError):
    """A rebuild that cannot write vectors over a store that carries some, without ``force``."""

    code = "ERR_REBUILD_NO_EMBED_REFUSED"


class EmbedModelMismatch(HeaddError):
    code = "ERR_EMBED_MODEL_MISMATCH"


class ModelUnavailable(HeaddError):
    code = "ERR_MODEL_UNAVAILABLE"


class StorageFailure(HeaddError):
    code = "ERR_STORAGE"


class DiscriminationFailed(HeaddError):
    code = "ERR_DISCRIMINATION_FAILED"


class SessionNotFound(HeaddError):
    code = "ERR_SESSION_NOT_FOUND"


class SessionLocked(HeaddError):
    code = "ERR_SESSION_LOCKED"


class DaemonRunning(HeaddError):
    code = "ERR_DAEMON_RUNNING"


class ShuttingDown(HeaddError):
    """The daemon is stopping: a long call (``index.rebuild``) ended at its next batch; what it
    wrote so far is what a crash there would leave, which the plane resumes from."""

    code = "ERR_SHUTTING_DOWN"


class RpcError(Exception):
    """A JSON-RPC protocol failure with one of the standard codes."""

    rpc_code: ClassVar[int] = -32603

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.rpc_code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


class ParseError(RpcError):
    rpc_code = -32700


class InvalidRequest(RpcError):
    rpc_code = -32600


class MethodNotFound(RpcError):
    rpc_code = -32601


class InvalidParams(RpcError):
    rpc_code = -32602


class InternalError(RpcError):
    rpc_code = -32603


#: Every domain error by its ERR_ code, so a client can raise the same class it was sent.
DOMAIN_ERRORS: dict[str, type[HeaddError]] = {
    cls.code: cls
    for cls in (
        InvalidMemory,
        PathNotFound,
        DuplicateContent,
        WriteConflict,
        InvalidOp,
        GitFailure,
        IndexStale,
        RebuildNoEmbedRefused,
        EmbedModelMismatch,
        ModelUnavailable,
        StorageFailure,
        DiscriminationFailed,
        SessionNotFound,
        SessionLocked,
        DaemonRunning,
        ShuttingDown,
    )
}
