"""Starting and stopping the daemon, again and again in one process, leaks no file descriptor and
no thread (datasette's ``test_fd_leak`` habit).

A daemon that leaves a socket, a SQLite handle, a git object database or a worker thread behind at
each stop runs out of descriptors in a process that restarts it (the test suite, an embedding
host) and hides a stop that does not finish. Each lifetime here serves real calls (a search, a
write through a session, the plane's index, the vector fill), so every subsystem that opens
something at start or on use has opened it before the stop. The first lifetime warms what a
process opens once for good (module imports, the embedder's tables); the counts after it must
not grow.

Seen red: with ``Service.shutdown`` no longer shutting the gate's thread pool down (a thread per
lifetime), and with ``PlaneService.shutdown`` skipped (the plane's writer thread and its SQLite
files stay open).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest
from headd_client.sync_client import Client
from support.daemon import short_socket_dir
from support.inprocess import InProcessDaemon
from support.stores import make_store

LIFETIMES = 4


def open_fds() -> set[str]:
    """This process's open descriptors, each as what it points to."""
    fds: set[str] = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            fds.add(f"{name}->{os.readlink(f'/proc/self/fd/{name}')}")
        except OSError:  # the directory's own descriptor, closed by now
            continue
    return fds


def settled_counts() -> tuple[int, int]:
    """Descriptors and threads once what a stop released has been collected."""
    for _ in range(50):
        gc.collect()
        if threading.active_count() <= 1 + _baseline_threads:
            break
        time.sleep(0.05)
    return len(open_fds()), threading.active_count()


_baseline_threads = threading.active_count() - 1


def one_lifetime(store: Path, sock: Path, turn: int) -> None:
    daemon = InProcessDaemon(store, sock, embedder="hash").start()
    try:
        with Client(sock) as headd:
            headd.call("vectors.fill")
            assert headd.search("postgres", limit=3).hits
            opened = headd.session_open()
            write = {"op": "write", "type": "semantic", "title": f"Fact {turn}"}
            write["claim"] = f"The leak test wrote fact number {turn}."
            headd.call("session.apply", session=opened.session, ops=[write])
            assert headd.session_commit(opened.session, message="leak").outcome == "committed"
            headd.call("index.update")
            headd.call("gate", base="HEAD~1", landed="HEAD", probes=5)
    finally:
        assert daemon.stop() == 0


@pytest.mark.slow
def test_repeated_daemon_lifetimes_leak_no_fd_and_no_thread(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    sock = short_socket_dir() / "head.sock"
    one_lifetime(store, sock, 0)
    fds_before, threads_before = settled_counts()
    for turn in range(1, LIFETIMES):
        one_lifetime(store, sock, turn)
    fds_after, threads_after = settled_counts()
    assert threads_after <= threads_before, threading.enumerate()
    assert fds_after <= fds_before, sorted(open_fds())
