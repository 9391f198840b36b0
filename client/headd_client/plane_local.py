"""The SQLite plane's methods run in this process, for ``headctl`` when no daemon serves the store.

It opens the store's plane (``<store>/.memhtml/headd/index.db`` + ``state.db``) as the daemon
does and answers through the plane's one typed dispatcher (``headd_plane.answer``), the one the
daemon's threads answer through, so an answer is the same Struct with or without a daemon.
SQLite serialises this process's writes with any other's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from headd.wire.answers import PlaneAnswer

#: Methods ``headctl`` can answer without a daemon.
LOCAL_METHODS = frozenset(
    {
        "index.rebuild",
        "index.update",
        "index.status",
        "state.export",
        "state.import",
        "traces.index",
        "traces.search",
        "traces.show",
    }
)


def trace_root_of(explicit: str | None, environ: Mapping[str, str]) -> Path:
    """``--trace-root``, else ``$MEMHTML_TRACE_ROOT``, else ``~/.claude`` (of ``$HOME``)."""
    if explicit:
        return Path(explicit).expanduser()
    env = environ.get("MEMHTML_TRACE_ROOT")
    if env:
        return Path(env).expanduser()
    home = environ.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude"


def exclude_plane_dir(store: Path) -> None:
    """``/.memhtml/headd/`` into ``.git/info/exclude`` (as the daemon's session manager does), so
    the plane's files never make the checkout look dirty when headctl creates them first."""
    from headd.store.git_io import exclude_in_store

    exclude_in_store(store, "/.memhtml/headd/")  # not a git store: nothing to keep clean


def call_local(
    store: Path,
    method: str,
    params: Mapping[str, object],
    environ: Mapping[str, str],
    now: datetime | None = None,
) -> PlaneAnswer:
    """Answer ``method`` on the store's plane here (the caller checked ``LOCAL_METHODS``): its
    params decoded into the wire's request as the daemon decodes them, then the plane's one
    dispatcher (``headd_plane.answer``), with the plane's writer serving the reads too."""
    import msgspec
    from headd_plane.answer import Context, PlaneRequest, answer
    from headd_plane.plane import open_plane

    from headd.wire.methods import decode_request

    if method not in LOCAL_METHODS:
        raise ValueError(f"not a local plane method: {method}")
    given = {name: value for name, value in params.items() if value is not None}
    request = decode_request(method, msgspec.json.encode(given))
    if not isinstance(request, PlaneRequest):
        raise ValueError(f"not a plane method: {method}")
    context = Context(store, now or datetime.now(UTC), trace_root_of(None, environ))
    exclude_plane_dir(store)
    plane = open_plane(store)
    try:
        return answer(request, plane, context)
    finally:
        plane.close()
