"""A follower driven one round at a time, and the check every remote test ends with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from headd.remote.sync import RemoteSync
from headd.store.ports import with_overlay
from headd.store.versions import GitVersions
from support.git import git
from support.stores import make_store


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


def hub_and_follower(root: Path) -> tuple[Path, Path]:
    """(a bare hub at ``root/hub.git`` holding a seeded store, its clone at ``root/b`` with an
    identity of its own)."""
    seed = root / "seed"
    make_store(seed)
    hub = root / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(hub)], check=True)
    follower = root / "b"
    subprocess.run(["git", "clone", "-q", str(hub), str(follower)], check=True)
    git(follower, "config", "user.name", "B")
    git(follower, "config", "user.email", "b@example.org")
    return hub, follower
