"""The SQLite plane's methods run in this process, for ``headctl`` when no daemon serves the store.

It opens the store's plane (``<store>/.memhtml/headd/index.db`` + ``state.db``) as the daemon
does and calls the same ``headd_plane.calls`` the daemon's threads call, so an answer is
the same with or without a daemon. SQLite serialises this process's writes with any other's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headd_plane import calls as plane_calls

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
    import pygit2

    from headd.store.git_io import ensure_excluded

    try:
        repo = pygit2.Repository(str(store))
    except (pygit2.GitError, KeyError):
        return  # not a git store: open_plane still works, there is nothing to keep clean
    if not repo.is_bare:
        ensure_excluded(repo, "/.memhtml/headd/")


def call_local(
    store: Path,
    method: str,
    params: Mapping[str, Any],
    environ: Mapping[str, str],
    now: datetime | None = None,
) -> Any:
    """Answer ``method`` on the store's plane here (the caller checked ``LOCAL_METHODS``)."""
    from headd_plane.plane import open_plane

    at = now or datetime.now(UTC)
    exclude_plane_dir(store)
    plane = open_plane(store)
    try:
        conn = plane.db.conn
        if method == "index.rebuild":
            return plane_calls.index_rebuild(
                plane, bool(params.get("embed", False)), bool(params.get("force", False))
            )
        if method == "index.update":
            return plane_calls.index_update(plane, bool(params.get("embed", False)))
        if method == "index.status":
            return plane_calls.index_status(plane)
        if method == "state.export":
            return plane_calls.state_export(conn, store)
        if method == "state.import":
            return plane_calls.state_import(conn, store)
        if method == "traces.index":
            root = trace_root_of(params.get("trace_root"), environ)
            return plane_calls.traces_index(conn, root, at)
        if method == "traces.search":
            return plane_calls.traces_search(
                conn, str(params.get("query", "")), int(params.get("limit", 10))
            )
        if method == "traces.show":
            return plane_calls.traces_show(conn, str(params["session"]))
    finally:
        plane.close()
    raise ValueError(f"not a local plane method: {method}")
