"""A session as a value: a base commit plus an ordered op log, folded from its events.

The session log (``session_log.py``) stores events, not states, so a restart replays them through
``fold`` and gets exactly the session it lost. Everything here is pure: no clock (every event
carries the ``at`` its caller stamped), no git, no files.

Events, in the order a session lives them::

    Opened  → Applied* → (Rebased | Dropped)* → Intent → Settled(landed) → Applied* … → Closed

``Intent`` is written before the commit path touches the working tree or the branch; ``Settled``
closes it either way (landed: the base moves to the commit and the ops clear; not landed: only the
intent clears). A log that ends in an ``Intent`` is an interrupted commit, settled by recovery.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from headd.errors import InvalidOp
from headd.ops import OverlayOp

#: One path segment, so an id can never leave the sessions directory (``\Z``, not ``$``, which
#: would let a trailing newline through).
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.match(session_id):
        raise InvalidOp(
            "a session id is 1-128 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            {"session": session_id[:140]},
        )
    return session_id


class LoggedOp(msgspec.Struct, frozen=True):
    """An overlay op as the session holds it; ``from_write`` marks a put rendered from ``write``.

    The mark matters at commit: a ``write`` whose content became a duplicate is answered
    ``deduped`` with the existing path, while a ``put`` duplicate is a violation.
    """

    op: OverlayOp
    from_write: bool = False


class Opened(msgspec.Struct, frozen=True, tag="open", tag_field="ev"):
    session: str
    base: str
    ref: str
    at: str


class Applied(msgspec.Struct, frozen=True, tag="apply", tag_field="ev"):
    ops: tuple[LoggedOp, ...]
    at: str


class Rebased(msgspec.Struct, frozen=True, tag="rebase", tag_field="ev"):
    onto: str
    at: str


class Dropped(msgspec.Struct, frozen=True, tag="drop", tag_field="ev"):
    """Ops taken out of the log by index (deduped writes)."""

    indexes: tuple[int, ...]
    at: str


class Intent(msgspec.Struct, frozen=True, tag="intent", tag_field="ev"):
    """A commit built and about to land: what recovery needs to decide whether it did."""

    commit: str
    parent: str
    ref: str
    paths: tuple[str, ...]
    worktree: bool
    at: str


class Settled(msgspec.Struct, frozen=True, tag="settled", tag_field="ev"):
    commit: str
    landed: bool
    recovered: bool
    at: str


class Closed(msgspec.Struct, frozen=True, tag="close", tag_field="ev"):
    at: str


Event = Opened | Applied | Rebased | Dropped | Intent | Settled | Closed


class SessionState(msgspec.Struct, frozen=True):
    session: str
    base: str
    ref: str
    opened_at: str
    updated_at: str
    ops: tuple[LoggedOp, ...] = ()
    pending: Intent | None = None
    closed: bool = False
    last_settled: Settled | None = None

    @property
    def overlay_ops(self) -> list[OverlayOp]:
        return [logged.op for logged in self.ops]


class CorruptLog(ValueError):
    """A log whose events cannot be folded (no ``Opened`` first, an event after ``Closed``)."""


def step(state: SessionState | None, event: Event) -> SessionState:
    """One event onto a state. ``None`` is the state before ``Opened``."""
    if state is None:
        if not isinstance(event, Opened):
            raise CorruptLog("a session log must start with its open event")
        return SessionState(
            session=event.session,
            base=event.base,
            ref=event.ref,
            opened_at=event.at,
            updated_at=event.at,
        )
    if state.closed:
        raise CorruptLog("an event after close")
    at = event.at
    match event:
        case Opened():
            raise CorruptLog("a second open event")
        case Applied(ops=ops):
            return msgspec.structs.replace(state, ops=state.ops + ops, updated_at=at)
        case Rebased(onto=onto):
            return msgspec.structs.replace(state, base=onto, updated_at=at)
        case Dropped(indexes=indexes):
            gone = set(indexes)
            kept = tuple(op for i, op in enumerate(state.ops) if i not in gone)
            return msgspec.structs.replace(state, ops=kept, updated_at=at)
        case Intent():
            return msgspec.structs.replace(state, pending=event, updated_at=at)
        case Settled(commit=commit, landed=landed):
            if landed:
                return msgspec.structs.replace(
                    state, base=commit, ops=(), pending=None, last_settled=event, updated_at=at
                )
            return msgspec.structs.replace(state, pending=None, last_settled=event, updated_at=at)
        case Closed():
            return msgspec.structs.replace(state, closed=True, updated_at=at)
    raise CorruptLog(f"unknown event {type(event).__name__}")


def fold(events: Iterable[Event]) -> SessionState:
    state: SessionState | None = None
    for event in events:
        state = step(state, event)
    if state is None:
        raise CorruptLog("an empty session log")
    return state
