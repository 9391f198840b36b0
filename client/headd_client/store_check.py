"""Why a path cannot be served as a store, and the command that fixes it, before any daemon runs.

Both doors that find no daemon use it: ``headctl`` when a call finds no answer, and the MCP
bridge before it would start one. The bridge must not start a daemon (nor create its log, which
would leave the directory no longer empty and make ``headctl init`` refuse it) at a path that is
not a store: it answers at once with the reason and a fix that works as written.
"""

from __future__ import annotations

from pathlib import Path


def store_problem(store: Path) -> str | None:
    """Why ``store`` is not a store a daemon can serve (with the fix), or None when it is one."""
    if not store.exists():
        return f"no store at {store}; create one with `headctl init {store}`"
    if not store.is_dir():
        return f"{store} is not a directory; point --store at a store"
    if not (store / ".git").exists():
        if not any(store.iterdir()):
            return f"{store} is empty, not a store; create one there with `headctl init {store}`"
        return (
            f"{store} is not a git repository (and not empty, so `headctl init` will not use it);"
            " point --store at your store, or create one with `headctl init NEW_DIR`"
        )
    if _has_no_commit(store):
        return (
            f"{store} has no commit yet: commit a first memory (or start over with "
            f"`headctl init` in an empty directory), then start the daemon with "
            f"`headd --store {store}`"
        )
    return None


def _has_no_commit(store: Path) -> bool:
    from headd.store.git_io import has_no_commit

    return has_no_commit(store)
