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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from headd.ops import Op
from headd.wire.answers import WireRecord
from headd_client import calls
from headd_client.mcp.failures import ToolFailure
from headd_client.mcp.spawn import DaemonLink

if TYPE_CHECKING:
    from headd.store.results import ApplyResult, Contradiction, Violation

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


@dataclass
class Landed:
    """What a committed session reports: the commit and what each op became."""

    sha: str | None
    paths: tuple[str, ...] = ()
    deduped: dict[int, str] = field(default_factory=dict)
    contradictions: tuple[Contradiction, ...] = ()


def violation_failure(violation: Violation) -> ToolFailure:
    kind = violation.kind
    code = _KIND_CODES.get(kind, "ERR_INVALID_MEMORY")
    path = violation.path or violation.existing or ""
    reasons = list(violation.reasons)
    if kind == "duplicate":
        message = f"the same content is already active at {violation.existing}"
    elif kind == "claim-edit":
        message = f"write conflict on {path}: an active memory with other content holds it"
    elif kind == "worktree-dirty":
        message = f"the store's work tree has uncommitted edits at {', '.join(violation.paths)}"
    elif kind == "batch-cap":
        message = f"a batch holds at most {violation.cap} ops, not {violation.count}"
    elif kind == "too-large":
        message = (
            f"too large: the memory is {violation.count} bytes and the limit is"
            f" {violation.cap} bytes; keep one fact, put the rest in a file and link it"
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
        self.session = self.link.run(calls.session_open()).session
        return self

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            # a closed or vanished session leaves nothing to clean
            with contextlib.suppress(Exception):
                self.link.run(calls.session_close(self.session), idempotent=False)

    def _id(self) -> str:
        if self.session is None:
            raise ToolFailure("ERR_INTERNAL", "the write session is not open")
        return self.session

    def apply(self, ops: Sequence[Op]) -> ApplyResult:
        """Append ``ops``; the daemon's answer (``violations`` non-empty means none appended)."""
        return self.link.run(calls.session_apply(self._id(), list(ops)), idempotent=False)

    def read(self, path: str) -> WireRecord | None:
        """The record ``path`` holds in this session's view, or None."""
        return self.link.run(calls.read(path, session=self.session)).record

    def commit(self, message: str, provenance: Provenance | None = None) -> Landed:
        given = provenance if provenance is not None and provenance.session_id else Provenance()
        commit = calls.session_commit(
            self._id(),
            message=message,
            session_id=given.session_id,
            prompt_id=given.prompt_id,
            turn=given.turn,
        )
        for _ in range(REBASE_ATTEMPTS):
            result = self.link.run(commit, idempotent=False)
            if result.outcome == "committed":
                return Landed(
                    sha=result.sha,
                    paths=result.paths or (),
                    deduped={d.op: d.existing for d in result.deduped or ()},
                    contradictions=result.contradictions or (),
                )
            if result.outcome == "refused":
                raise _first_failure(result.violations or ())
            rebased = self.link.run(calls.session_rebase(self._id()), idempotent=False)
            if rebased.violations:
                raise _first_failure(rebased.violations)
        raise ToolFailure(
            "ERR_WRITE_CONFLICT",
            f"the branch kept moving: {REBASE_ATTEMPTS} rebases did not land the commit",
        )


def _first_failure(violations: Sequence[Violation]) -> ToolFailure:
    if not violations:
        return ToolFailure("ERR_WRITE_CONFLICT", "the commit was refused")
    return violation_failure(violations[0])
