"""The daemon's binding of the session registry (``headd.store``) to the version it follows.

The registry judges ops against versions it asks a ``VersionSource`` for; the daemon's source is
its own follower, so a session on the current tip reuses the version every read uses, and an
older base comes from the follower's LRU or one tree-diff advance on the git thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from headd.daemon.follow import RefFollower

if TYPE_CHECKING:
    from headd.head.version import HeadVersion
    from headd.store.manager import SessionManager


class FollowerVersions:
    """``VersionSource`` over the follower (called from the session thread, never the loop)."""

    def __init__(self, follower: RefFollower) -> None:
        self._follower = follower

    def version(self, sha: str) -> HeadVersion:
        return self._follower.version_blocking(sha)


def make_registry(store: Path, follower: RefFollower) -> SessionManager:
    from headd.store.manager import SessionManager

    return SessionManager(store, follower.ref, versions=FollowerVersions(follower))
