"""Writes as daemon sessions: open, apply the ops, commit to the branch, close.

Each write tool call is one session and one commit, so its result can name the commit. When the
branch moved between the session's base and its commit (another agent landed first) the daemon
answers ``rebase-needed``; the bridge then rebases the session onto the tip and commits again,
a bounded number of times. A rebase that finds a real conflict (the same content landed, a claim
edited under us, an overlapping path) reports it as violations, and that is what reaches the
agent; a moved branch alone never does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headd_client.mcp.failures import ToolFailure
from headd_client.mcp.spawn import DaemonLink

#: How many times a commit is rebased onto a moved branch before the bridge gives up.
REBASE_ATTEMPTS = 32

_KIND_CODES = {
    "format": "ERR_INVALID_MEMORY",
    "reserved-path": "ERR_INVALID_MEMORY",
    "batch-cap": "ERR_INVALID_MEMORY",
    "duplicate": "ERR_DUPLICATE_CONTENT",
    "claim-edit": "ERR_WRITE_CONFLICT",
    "worktree-dirty": "ERR_DIRTY_TREE",
    "too-large": "ERR_TOO_LARGE",
}


@dataclass
class Provenance:
    session_id: str | None = None
    prompt_id: str | None = None
    turn: str | None = None

    def params(self) -> dict[str, Any]:
        if self.session_id is None:
            return {}
        return {"session_id": self.session_id, "prompt_id": self.prompt_id, "turn": self.turn}


@dataclass
class Landed:
    """What a committed session reports: the commit and what each op became."""

    sha: str | None
    paths: tuple[str, ...] = ()
    deduped: dict[int, str] = field(default_factory=dict)
    contradictions: tuple[Mapping[str, Any], ...] = ()


def violation_failure(violation: Mapping[str, Any]) -> ToolFailure:
    kind = str(violation.get("kind"))
    code = _KIND_CODES.get(kind, "ERR_INVALID_MEMORY")
    path = violation.get("path") or violation.get("existing") or ""
    reasons = list(violation.get("reasons") or ())
    if kind == "duplicate":
        message = f"the same content is already active at {violation.get('existing')}"
    elif kind == "claim-edit":
        message = f"write conflict on {path}: an active memory with other content holds it"
    elif kind == "worktree-dirty":
        message = f"the store's work tree has uncommitted edits at {', '.join(violation.get('paths') or ())}"
    elif kind == "batch-cap":
        message = f"a batch holds at most {violation.get('cap')} ops, not {violation.get('count')}"
    elif kind == "too-large":
        message = (
            f"too large: the memory is {violation.get('count')} bytes and the limit is"
            f" {violation.get('cap')} bytes; keep one fact, put the rest in a file and link it"
        )
    elif reasons:
        message = "invalid memory: " + "; ".join(str(r) for r in reasons)
    else:
        message = f"refused ({kind}) at {path}"
    return ToolFailure(code, message, {"kind": kind, "path": path, "reasons": reasons})


class WriteSession:
    """One daemon session for one tool call; use as a context manager (it always closes)."""

    def __init__(self, link: DaemonLink) -> None:
        self.link = link
        self.session: str | None = None

    def __enter__(self) -> WriteSession:
        opened = self.link.call("session.open", {})
        self.session = str(opened["session"])
        return self

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            # a closed or vanished session leaves nothing to clean
            with contextlib.suppress(Exception):
                self.link.call("session.close", {"session": self.session}, idempotent=False)

    def apply(self, ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Append ``ops``; the daemon's answer (``violations`` non-empty means none appended)."""
        return dict(
            self.link.call(
                "session.apply", {"session": self.session, "ops": list(ops)}, idempotent=False
            )
        )

    def read(self, path: str) -> Any:
        """The record ``path`` holds in this session's view, or None."""
        return self.link.call("read", {"path": path, "session": self.session}).get("record")

    def commit(self, message: str, provenance: Provenance | None = None) -> Landed:
        params: dict[str, Any] = {"session": self.session, "message": message}
        if provenance is not None:
            params.update(provenance.params())
        for _ in range(REBASE_ATTEMPTS):
            result = self.link.call("session.commit", params, idempotent=False)
            outcome = result.get("outcome")
            if outcome == "committed":
                return Landed(
                    sha=result.get("sha"),
                    paths=tuple(result.get("paths") or ()),
                    deduped={int(d["op"]): str(d["existing"]) for d in result.get("deduped") or ()},
                    contradictions=tuple(result.get("contradictions") or ()),
                )
            if outcome == "refused":
                raise _first_failure(result.get("violations") or ())
            rebased = self.link.call("session.rebase", {"session": self.session}, idempotent=False)
            if rebased.get("violations"):
                raise _first_failure(rebased["violations"])
        raise ToolFailure(
            "ERR_WRITE_CONFLICT",
            f"the branch kept moving: {REBASE_ATTEMPTS} rebases did not land the commit",
        )


def _first_failure(violations: Sequence[Mapping[str, Any]]) -> ToolFailure:
    if not violations:
        return ToolFailure("ERR_WRITE_CONFLICT", "the commit was refused")
    return violation_failure(violations[0])
