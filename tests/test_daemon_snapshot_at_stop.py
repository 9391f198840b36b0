"""A clean stop writes the tip's snapshot when the background writer had not yet, so the next
start decodes it instead of loading (or advancing) from git.

The writer coalesces snapshots to one per interval (30 s by default); a commit picked up just
after READY waits for that interval, and a stop inside it writes that snapshot itself.

A stop right after READY, before the first write is even scheduled (that waits for the work
just after READY), writes the loaded version's snapshot too.

Mutation note: ``SnapshotWriter.shutdown`` without its final write -> the second start answers
``snapshot+advance``: red. Without ``SnapshotWriter.remember`` at READY, the stop right after a
git load leaves no snapshot: red.
"""

from __future__ import annotations

from pathlib import Path

from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir, wait_for
from support.git import external_commit
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.snapshot_store import SnapshotStore


def status(socket_path: Path) -> dict:
    with Client(socket_path, timeout=30) as c:
        return dict(c.call("status"))


def test_a_stop_right_after_a_pickup_writes_the_tips_snapshot(tmp_path: Path) -> None:
    store = tmp_path / "store"
    seed = make_store(store)
    socket_path = short_socket_dir() / "snap.sock"
    daemon = Daemon(store, socket_path).wait_ready()
    try:
        assert wait_for(lambda: SnapshotStore(store).has(seed), timeout=30)
        tip = external_commit(
            store, {"areas/inbox/picked-up.html": memory_html("Picked up", "Owls hunt at night.")}
        )
        assert wait_for(lambda: status(socket_path)["sha"] == tip, timeout=30)
        assert not SnapshotStore(store).has(tip), "the writer waits out its interval"
        assert daemon.stop(timeout=30) == 0  # a clean stop: SIGTERM, exit 0
    finally:
        daemon.stop()
    assert SnapshotStore(store).has(tip)
    again = Daemon(store, socket_path).wait_ready()
    try:
        st = status(socket_path)
        assert st["sha"] == tip and st["load_source"] == "snapshot", st
    finally:
        again.stop()


def test_a_stop_right_after_ready_from_git_writes_the_loaded_snapshot(tmp_path: Path) -> None:
    store = tmp_path / "store"
    seed = make_store(store)
    socket_path = short_socket_dir() / "snap-ready.sock"
    daemon = Daemon(store, socket_path).wait_ready()
    try:
        assert daemon.stop(timeout=30) == 0  # a clean stop: SIGTERM, exit 0
    finally:
        daemon.stop()
    assert "loaded from git" in daemon.log()
    assert SnapshotStore(store).has(seed)
    again = Daemon(store, socket_path).wait_ready()
    try:
        assert status(socket_path)["load_source"] == "snapshot"
    finally:
        again.stop()
