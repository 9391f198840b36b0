"""The SQLite plane's methods as one typed dispatch: a request of ``headd.wire.methods`` in, its
report out.

Both ways a plane method is answered go through :func:`answer`: the daemon, on its plane threads,
and ``headctl`` in its own process when no daemon serves the store. One rule routes a request
(:func:`is_read`): a read runs on a read-only connection (the daemon's reader threads hand it a
``Retrieval``), anything else writes and runs on the plane's one writer (a ``Plane``). Where the
request leaves a value to its caller (the instant it is answered at, the trace root, the head's
ranked pool for recall), the :class:`Context` carries it, so nothing here reads a clock or the
environment. The filter stays the wire's typed ``Filter`` all the way to the scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from headd.errors import MethodNotFound
from headd.wire.methods import (
    IndexRebuild,
    IndexStatus,
    IndexUpdate,
    Recall,
    Reinforce,
    Search,
    StateExport,
    StateImport,
    TracesIndex,
    TracesSearch,
    TracesShow,
)
from headd_plane import calls

if TYPE_CHECKING:
    from headd.wire.answers import PlaneAnswer
    from headd_plane.plane import Plane
    from headd_plane.recall import RankedPool
    from headd_plane.retrieval import Retrieval

PlaneRequest = (
    Search
    | Recall
    | TracesSearch
    | TracesShow
    | Reinforce
    | IndexRebuild
    | IndexUpdate
    | IndexStatus
    | StateExport
    | StateImport
    | TracesIndex
)

#: The requests that only read: they run on a read-only connection.
READS: tuple[type, ...] = (Search, Recall, TracesSearch, TracesShow)


@dataclass(frozen=True, slots=True)
class Context:
    """What a plane method takes from its caller rather than from the request."""

    store: Path
    #: The instant the request is answered at (its ``now`` when it has one).
    now: datetime
    #: Where transcripts are, when ``traces.index`` names no root.
    trace_root: Path
    #: Recall's candidates as the head ranked them (the daemon's; None ranks in the plane).
    ranked: RankedPool | None = None


def is_read(request: PlaneRequest) -> bool:
    """Whether ``request`` only reads (a reader serves it) or writes (the one writer does)."""
    return isinstance(request, READS)


def answer(request: PlaneRequest, on: Plane | Retrieval, context: Context) -> PlaneAnswer:
    """The report ``request`` answers, read from ``on`` (a ``Plane`` serves every request, a
    ``Retrieval`` the reads)."""
    epoch = context.now.timestamp()
    match request:
        case Search(query=query, filter=filter_, limit=limit):
            return calls.search(_reader(on), query, filter_, limit, epoch)
        case Recall(query=query, filter=filter_, budget_chars=budget):
            return calls.recall(_reader(on), query, filter_, budget, epoch, context.ranked)
        case TracesSearch(query=query, limit=limit):
            return calls.traces_search(_reader(on).db.conn, query, limit)
        case TracesShow(session=session):
            return calls.traces_show(_reader(on).db.conn, session)
        case Reinforce(paths=paths, signal=signal):
            return calls.reinforce(_writer(on).db.conn, paths, signal, context.now)
        case IndexRebuild(embed=embed, force=force):
            return calls.index_rebuild(_writer(on), embed, force)
        case IndexUpdate(embed=embed):
            return calls.index_update(_writer(on), embed)
        case IndexStatus():
            return calls.index_status(_writer(on))
        case StateExport():
            return calls.state_export(_writer(on).db.conn, context.store)
        case StateImport():
            return calls.state_import(_writer(on).db.conn, context.store)
        case TracesIndex(trace_root=root):
            target = context.trace_root if root is None else Path(root).expanduser()
            return calls.traces_index(_writer(on).db.conn, target, context.now)
    raise MethodNotFound(f"no plane method for {type(request).__name__}")


def _reader(on: Plane | Retrieval) -> Retrieval:
    from headd_plane.plane import Plane

    return on.retrieval if isinstance(on, Plane) else on


def _writer(on: Plane | Retrieval) -> Plane:
    from headd_plane.plane import Plane

    if not isinstance(on, Plane):
        raise TypeError("a plane write needs the writer's Plane, not a read-only Retrieval")
    return on
