"""What the remote reports, as msgspec Structs: ``status.remote`` (where the followed branch
stands against its upstream, the last round's failure, the open conflicts) and ``sync``'s answer.

``headd.remote.sync`` and ``headd.remote.rescue`` build these values; the shapes are the wire's,
because the wire sits below the remote and imports none of it (the remote brings git along,
which no client needs), and ``docs/protocol.md`` describes them from here. Field order is the
order the keys always had.
"""

from __future__ import annotations

from typing import Literal

import msgspec

#: What a round did: ``running`` when ``sync`` stopped waiting for a round still under way.
Action = Literal["up-to-date", "fast-forward", "pushed", "replayed", "failed", "running"]


class RemoteError(msgspec.Struct, frozen=True):
    """Why the last round failed; ``commit`` and ``path`` name a refused remote tree's culprit."""

    kind: str
    message: str
    transient: bool
    at: str
    commit: str | None = None
    path: str | None = None


class Conflict(msgspec.Struct, frozen=True):
    """A path both sides changed: the remote's version is at ``path``; ours is at ``ours``."""

    id: str
    path: str
    #: The local commit that holds our version (kept under ``ref``).
    ours: str
    #: The tip whose version of ``path`` won.
    theirs: str
    ref: str
    at: str


class RemoteStatus(msgspec.Struct, frozen=True):
    """``status.remote``: where the followed branch stands against its upstream."""

    name: str
    url: str | None
    upstream: str
    ahead: int
    behind: int
    last_fetch_at: str | None
    last_push_at: str | None
    last_error: RemoteError | None
    conflicts: tuple[Conflict, ...]
    rescues: int = 0


class RoundReport(msgspec.Struct, frozen=True):
    """What one round did (``sync``'s answer)."""

    action: Action
    local: str | None
    remote: str | None
    attempts: int
    replayed: int = 0
    deduped: int = 0
    new_conflicts: tuple[str, ...] = ()
    error: RemoteError | None = None


class SyncAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``sync``: the round it ran (``round``) or, with ``resolve``, the conflicts it marked
    resolved (``resolved``), never both, and where the remote stands after it."""

    round: RoundReport | msgspec.UnsetType = msgspec.UNSET
    resolved: tuple[Conflict, ...] | msgspec.UnsetType = msgspec.UNSET
    remote: RemoteStatus | None
