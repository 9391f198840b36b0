"""A follower driven one round at a time, and the check every remote test ends with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from headd.remote.sync import RemoteSync
from headd.store.ports import with_overlay
from headd.store.versions import GitVersions


def sync_of(store: Path) -> RemoteSync:
    """The follower of ``store``'s ``main`` on ``origin``, with a short backoff."""
    return RemoteSync(
        store,
        "origin",
        "refs/heads/main",
        versions=GitVersions(store),
        overlay=with_overlay,
        backoff=0.01,
    )


def fsck(repo: Path) -> None:
    """``git fsck --strict`` finds nothing wrong with ``repo``."""
    done = subprocess.run(
        ["git", "-C", str(repo), "fsck", "--strict"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
