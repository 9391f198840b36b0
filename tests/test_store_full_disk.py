"""A full disk is ``ERR_STORAGE`` naming ENOSPC, and loses nothing.

The store lives on a small tmpfs the test mounts (root only; without root, or where mounting is
not allowed, the test skips and says so). The disk is filled with a plain file after the session
is opened, so the commit's own writes (git objects, the session log) meet a real ENOSPC.

Mutation note: skipping the probe write in ``disk.git_failure`` -> both tests red (``ERR_GIT:
the path … does not exist in the given tree`` instead, libgit2's word for a blob it never wrote).
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.git import git, tip
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.errors import StorageFailure
from headd.ops import Put
from headd.store.manager import SessionManager


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for a real ENOSPC needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk says ENOSPC; answer it (delete it to free the disk)."""
    filler = disk / "filler"
    chunk = b"\0" * (1 << 16)
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # Small files still fit in a block's tail elsewhere: take those too.
    for n in range(10_000):
        try:
            (disk / f"crumb-{n}").write_bytes(b"\0" * 512)
        except OSError:
            break
    return filler


def free(disk: Path) -> None:
    for path in disk.iterdir():
        if path.name == "filler" or path.name.startswith("crumb-"):
            path.unlink()


def test_a_commit_on_a_full_disk_is_err_storage_enospc(small_disk: Path) -> None:
    store = small_disk / "store"
    make_store(store, SEED_FILES, ignore=None)
    before = tip(store)
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    html = memory_html("Disk", "The disk is full now.", body="x" * 20_000, **WRITTEN)
    assert manager.apply(s, [Put(path="areas/inbox/disk.html", html=html)]).violations == ()
    fill(small_disk)
    with pytest.raises(StorageFailure) as raised:
        manager.commit(s)
    assert "ENOSPC" in raised.value.message and raised.value.details["errno"] == "ENOSPC"
    assert tip(store) == before
    free(small_disk)
    assert manager.commit(s).outcome == "committed", "nothing lost: the session lands later"
    assert git(store, "status", "--porcelain") == ""


def test_the_daemon_answers_err_storage_naming_enospc(small_disk: Path) -> None:
    store = small_disk / "store"
    make_store(store)
    socket_path = short_socket_dir() / "full.sock"
    daemon = Daemon(store, socket_path).wait_ready()
    try:
        with Client(socket_path, timeout=30) as c:
            s = c.call("session.open")["session"]
            put = {
                "op": "put",
                "path": "areas/inbox/disk-is-full.html",
                "html": memory_html("Disk is full", "The disk is full now. " + "y" * 20_000),
            }
            c.call("session.apply", {"session": s, "ops": [put]})
            fill(small_disk)
            with pytest.raises(Exception) as raised:
                c.call("session.commit", {"session": s})
            assert getattr(raised.value, "code", None) == "ERR_STORAGE", raised.value
            assert "ENOSPC" in str(raised.value)
            free(small_disk)
            assert c.call("session.commit", {"session": s})["outcome"] == "committed"
    finally:
        daemon.stop()
