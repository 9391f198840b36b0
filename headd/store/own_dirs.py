"""The directories headd writes in must be the store's own, never symbolic links.

Everything the daemon writes (``index.db``, ``state.db``, session logs holding memory text,
snapshots, vectors, the converted model, the socket) lives under ``<store>/.memhtml/``. A
committed (or planted) ``.memhtml -> /elsewhere`` would move all of it to wherever the link points,
so the daemon refuses to start instead (``ERR_STORAGE`` naming the link), before it writes
anything. ``headd.symlinks.worktree_symlink`` does the walk: ``lstat`` per component, never
following.
"""

from __future__ import annotations

from pathlib import Path

from headd.errors import StorageFailure
from headd.symlinks import worktree_symlink

#: The directories under the store the daemon and the plane write in.
OWN_DIRS = (
    ".memhtml/headd/sessions",
    ".memhtml/headd/snapshots",
    ".memhtml/headd/vectors",
    ".memhtml/headd/models",
    ".memhtml/state",
)


def check_own_dirs(store: Path) -> None:
    """Refuse (``StorageFailure``) when any directory headd writes in is, or lies under, a
    symbolic link in the store's work tree."""
    for directory in OWN_DIRS:
        link = worktree_symlink(store, directory)
        if link is not None:
            raise StorageFailure(
                f"{store / link} is a symbolic link; headd writes its index, state and session "
                f"logs under {store / '.memhtml'} and never through a link: replace the link "
                "with a directory (git rm it if it is committed) and start again",
                {"path": link, "reason": "symlink"},
            )
