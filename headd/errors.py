"""Every failure headd can name, each knowing its wire code, grouped by who is at fault.

The tree::

    HeaddError                      -32000, data.code = the ERR_ name below
    ├── CallerError                 the request is wrong: resending it as is fails again
    │   ├── InvalidMemory           ERR_INVALID_MEMORY (details.violations: every one)
    │   ├── PathNotFound            ERR_PATH_NOT_FOUND
    │   ├── DuplicateContent        ERR_DUPLICATE_CONTENT
    │   ├── InvalidOp               ERR_INVALID_OP (an overlay op that does not resolve)
    │   ├── DiscriminationFailed    ERR_DISCRIMINATION_FAILED (the head gate refused)
    │   ├── RebuildNoEmbedRefused   ERR_REBUILD_NO_EMBED_REFUSED (a rebuild would leave vectors stale)
    │   ├── SecretFound             ERR_SECRET (a write holds a credential; never echoes it)
    │   ├── SleepRunMerged          ERR_SLEEP_RUN_MERGED (a merged run is history, not discardable)
    │   └── SessionNotFound         ERR_SESSION_NOT_FOUND
    ├── Conflict                    another writer or a moving tip got there first: retry
    │   ├── WriteConflict           ERR_WRITE_CONFLICT
    │   ├── SessionLocked           ERR_SESSION_LOCKED
    │   └── IndexStale              ERR_INDEX_STALE
    └── EnvironmentFailure          the machine, the store or the daemon, not the request
        ├── GitFailure              ERR_GIT
        ├── StorageFailure          ERR_STORAGE
        ├── EmbedModelMismatch      ERR_EMBED_MODEL_MISMATCH
        ├── ModelUnavailable        ERR_MODEL_UNAVAILABLE
        ├── DaemonRunning           ERR_DAEMON_RUNNING (a second daemon on one store)
        ├── ShuttingDown            ERR_SHUTTING_DOWN (a long call cut short by the stop)
        ├── DaemonUnavailable       ERR_DAEMON_UNAVAILABLE (client side: no daemon answers)
        └── ProtocolViolation       ERR_PROTOCOL (client side: the answer is not JSON-RPC)

    RpcError                        the JSON-RPC standard codes, never a domain failure
    ├── ParseError                  -32700
    ├── InvalidRequest              -32600
    ├── MethodNotFound              -32601
    ├── InvalidParams               -32602
    └── InternalError               -32603

``to_wire`` turns an exception into the ``error`` member of an answer; ``from_wire`` turns that
member back into the same class, so a client raises what the daemon raised. An ``ERR_`` code this
side does not know still becomes a ``HeaddError`` whose ``code`` is the one sent. The three groups
carry no wire code of their own: the wire names the leaf, and a caller that only cares whether to
retry catches ``Conflict``.

Messages never carry memory text or SQL parameters (docs/protocol.md, "Errors"): a message names the
path, the operation or the rule, and ``details`` carries structured facts a client can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

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

    @classmethod
    def from_details(cls, message: str, details: dict[str, Any]) -> Self:
        """The exception a wire answer carrying ``message`` and ``details`` stands for."""
        return cls(message, details)


class CallerError(HeaddError):
    """The request is wrong (a bad file, a missing path, a refused gate): fix it, then resend."""


class Conflict(HeaddError):
    """Someone else changed what the request depended on; the same request may pass on retry."""


class EnvironmentFailure(HeaddError):
    """Git, the disk, the model or the daemon failed; the request itself may be fine."""


class InvalidMemory(CallerError):
    """A file that breaks the format; ``violations`` lists every one, never just the first."""

    code = "ERR_INVALID_MEMORY"

    def __init__(
        self, path: str, violations: list[str] | tuple[str, ...], message: str | None = None
    ) -> None:
        self.path = path
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__(
            message if message is not None else f"invalid memory: {'; '.join(self.violations)}",
            {"path": path, "violations": list(self.violations)},
        )

    @classmethod
    def from_details(cls, message: str, details: dict[str, Any]) -> Self:
        exc = cls(str(details.get("path", "")), tuple(details.get("violations", ())), message)
        exc.details = details
        return exc


class PathNotFound(CallerError):
    code = "ERR_PATH_NOT_FOUND"


class DuplicateContent(CallerError):
    code = "ERR_DUPLICATE_CONTENT"


class WriteConflict(Conflict):
    code = "ERR_WRITE_CONFLICT"


class InvalidOp(CallerError):
    code = "ERR_INVALID_OP"


class GitFailure(EnvironmentFailure):
    code = "ERR_GIT"


class IndexStale(Conflict):
    code = "ERR_INDEX_STALE"


class RebuildNoEmbedRefused(CallerError):
    """A rebuild that cannot write vectors over a store that carries some, without ``force``."""

    code = "ERR_REBUILD_NO_EMBED_REFUSED"


class EmbedModelMismatch(EnvironmentFailure):
    code = "ERR_EMBED_MODEL_MISMATCH"


class ModelUnavailable(EnvironmentFailure):
    code = "ERR_MODEL_UNAVAILABLE"


class StorageFailure(EnvironmentFailure):
    code = "ERR_STORAGE"


class DiscriminationFailed(CallerError):
    code = "ERR_DISCRIMINATION_FAILED"


class SecretFound(CallerError):
    """A write holds something credential-shaped: nothing of the batch is appended.

    ``details.findings`` lists each one as ``{op, field, kind, line, column}`` (and ``path``
    when the op names one); the value itself is never in the message or the details, since
    both end up in logs, terminals and agent transcripts."""

    code = "ERR_SECRET"


class SleepRunMerged(CallerError):
    """``sleep.discard`` of a run whose changes are on main: deleting its branch would undo
    nothing and lose the record of what landed."""

    code = "ERR_SLEEP_RUN_MERGED"


class SessionNotFound(CallerError):
    code = "ERR_SESSION_NOT_FOUND"


class SessionLocked(Conflict):
    code = "ERR_SESSION_LOCKED"


class DaemonRunning(EnvironmentFailure):
    code = "ERR_DAEMON_RUNNING"


class ShuttingDown(EnvironmentFailure):
    """The daemon is stopping: a long call (``index.rebuild``) ended at its next batch; what it
    wrote so far is what a crash there would leave, which the plane resumes from."""

    code = "ERR_SHUTTING_DOWN"


class DaemonUnavailable(EnvironmentFailure):
    """No daemon answers on the socket (not running, or it went away mid-call); raised by the
    client, never sent."""

    code = "ERR_DAEMON_UNAVAILABLE"


class ProtocolViolation(EnvironmentFailure):
    """The daemon sent something that is not a JSON-RPC answer we asked for; raised by the
    client, never sent."""

    code = "ERR_PROTOCOL"


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
        SecretFound,
        SleepRunMerged,
        SessionNotFound,
        SessionLocked,
        DaemonRunning,
        ShuttingDown,
        DaemonUnavailable,
        ProtocolViolation,
    )
}

#: Every protocol error by its JSON-RPC code.
RPC_ERRORS: dict[int, type[RpcError]] = {
    cls.rpc_code: cls
    for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError)
}

_unknown_domain: dict[str, type[HeaddError]] = {}


def _domain_class(code: str) -> type[HeaddError]:
    known = DOMAIN_ERRORS.get(code)
    if known is not None:
        return known
    cls = _unknown_domain.get(code)
    if cls is None:
        cls = type("RemoteError_" + code, (HeaddError,), {"code": code})
        _unknown_domain[code] = cls
    return cls


def from_wire(error: Mapping[str, Any]) -> HeaddError | RpcError:
    """The exception an answer's ``error`` member (``{code, message, data?}``) stands for: the
    inverse of ``to_wire``. A domain code whose ``data`` is not an object is an ``RpcError``."""
    code = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    if code == DOMAIN_ERROR_CODE and isinstance(data, Mapping):
        details = data.get("details")
        cls = _domain_class(str(data.get("code", HeaddError.code)))
        return cls.from_details(message, dict(details) if isinstance(details, Mapping) else {})
    rpc_cls = RPC_ERRORS.get(code, RpcError) if isinstance(code, int) else RpcError
    return rpc_cls(message, data)
