"""What the session methods answer: plain msgspec Structs the daemon encodes as they are.

Field names follow docs/protocol.md (``session.*``). Optional fields default to None and the
daemon drops nulls it does not want; ``outcome`` is one of ``committed``, ``rebase-needed``,
``refused``.
"""

from __future__ import annotations

import msgspec

COMMITTED = "committed"
REBASE_NEEDED = "rebase-needed"
REFUSED = "refused"

#: ``session.commit``'s ``rebase``: move a stale base onto the tip when nothing conflicts, or not.
REBASE_AUTO = "auto"
REBASE_NEVER = "never"
REBASE_MODES = (REBASE_AUTO, REBASE_NEVER)


class Violation(msgspec.Struct, frozen=True, omit_defaults=True):
    """One reason a batch cannot land.

    ``kind`` is one of: ``format`` (the file or the op does not hold; ``reasons`` lists every
    one), ``duplicate`` (the content hash is active at ``existing``), ``claim-edit`` (a put over
    an active path with another content hash), ``reserved-path``, ``batch-cap``
    (``count`` > ``cap``), ``worktree-dirty`` (the checkout holds uncommitted edits at ``paths``),
    ``symlink`` (the op would write through or over the symbolic link at ``paths``),
    ``too-large`` (the file is ``count`` bytes, over the ``cap`` of
    :data:`headd.limits.MAX_MEMORY_BYTES`).
    ``op`` is the op's index in the session log (or in the ``apply`` batch), when one op is to
    blame.
    """

    kind: str
    path: str | None = None
    op: int | None = None
    reasons: tuple[str, ...] = ()
    existing: str | None = None
    count: int | None = None
    cap: int | None = None
    paths: tuple[str, ...] = ()


class Contradiction(msgspec.Struct, frozen=True):
    """A put whose claim shares a frame key with ``against``; it carries a contradicts link."""

    path: str
    against: str


class Deduped(msgspec.Struct, frozen=True):
    """A ``write`` whose content is already active at ``existing``: nothing is written for it."""

    op: int
    existing: str


class Settlement(msgspec.Struct, frozen=True):
    """How an interrupted commit ended: ``landed`` says whether the branch reached ``sha``."""

    session: str
    sha: str
    landed: bool
    at: str


class SessionInfo(msgspec.Struct, frozen=True):
    session: str
    base: str
    ref: str
    ops: int
    opened_at: str
    updated_at: str
    pending: str | None = None
    last_settlement: Settlement | None = None


class OpenResult(msgspec.Struct, frozen=True):
    session: str
    base: str


class ApplyResult(msgspec.Struct, frozen=True):
    """``ops`` is how many ops the session holds now; a batch with a violation appends none."""

    session: str
    ops: int
    violations: tuple[Violation, ...] = ()
    deduped: tuple[Deduped, ...] = ()
    paths: tuple[str, ...] = ()


class RebaseResult(msgspec.Struct, frozen=True):
    """The session now sits on ``base``; ``violations`` are what a commit there would refuse."""

    session: str
    base: str
    ops: int
    violations: tuple[Violation, ...] = ()
    deduped: tuple[Deduped, ...] = ()


class CommitResult(msgspec.Struct, frozen=True, omit_defaults=True):
    outcome: str
    sha: str | None = None
    paths: tuple[str, ...] | None = None
    contradictions: tuple[Contradiction, ...] | None = None
    overlapping: tuple[str, ...] | None = None
    violations: tuple[Violation, ...] | None = None
    deduped: tuple[Deduped, ...] | None = None
    worktree_synced: bool | None = None
    recovered: Settlement | None = None


class CloseResult(msgspec.Struct, frozen=True):
    session: str
    closed: bool
    dropped_ops: int


class ListResult(msgspec.Struct, frozen=True):
    sessions: tuple[SessionInfo, ...]
