"""The real daemon, SIGKILLed again and again while agents commit, always starts and loses nothing.

Six rounds (bounded, about half a minute): start ``headd``, let three writers commit one put
per session over the socket, SIGKILL the daemon after a pseudo-random moment (fixed seed), and,
while it is down, SIGKILL a real ``git commit`` and a real ``git update-ref`` transaction in the
store so their lock files stay, as a crash mid-commit leaves them. Every round the daemon must
start (stale locks recovered, interrupted commits settled), and at the end every commit it
acknowledged is on the branch, the checkout is clean, and no lock or temporary is left.

Mutation note: ``locks.recover`` returning ``[]`` -> the second round's daemon refuses to start
(``the index is locked``) or every commit fails.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest
from headd_client.sync_client import Client
from support.crashes import leave_stale_git_locks
from support.daemon import Daemon, short_socket_dir
from support.git import git
from support.memory import memory_html
from support.stores import make_store

ROUNDS = 6
WRITERS = 3


def writer(socket_path: Path, w: int, stop: threading.Event, acked: list[tuple[str, str]]) -> None:
    """Commit one new memory per session until the daemon dies; note each acknowledged one."""
    n = 0
    try:
        with Client(socket_path, timeout=10) as c:
            while not stop.is_set():
                n += 1
                path = f"areas/kill/w{w}-{time.monotonic_ns()}.html"
                title = f"Kill loop writer {w} note {n} {path[-12:-5]}"
                html = memory_html(title, f"{title} is acknowledged.")
                s = c.call("session.open")["session"]
                c.call(
                    "session.apply",
                    {"session": s, "ops": [{"op": "put", "path": path, "html": html}]},
                )
                result = c.call("session.commit", {"session": s})
                if result["outcome"] == "committed":
                    acked.append((result["sha"], path))
                c.call("session.close", {"session": s})
    except (OSError, ConnectionError, EOFError, Exception):
        return  # the daemon was killed under us: what it acknowledged is in ``acked``


@pytest.mark.slow
def test_the_daemon_killed_in_a_loop_always_starts_and_keeps_every_acknowledged_commit(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    make_store(store)
    socket_path = short_socket_dir() / "k.sock"
    rng = random.Random(14)
    acked: list[tuple[str, str]] = []
    for round_ in range(ROUNDS):
        daemon = Daemon(store, socket_path).wait_ready(timeout=60)
        stop = threading.Event()
        threads = [
            threading.Thread(target=writer, args=(socket_path, w, stop, acked))
            for w in range(WRITERS)
        ]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.3, 1.2))
        daemon.proc.kill()
        daemon.proc.wait()
        daemon.stop()
        stop.set()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        if round_ % 2 == 0:
            leave_stale_git_locks(store, "areas/inbox/postgres-is-the-system-of-record.html")
    daemon = Daemon(store, socket_path).wait_ready(timeout=60)
    try:
        with Client(socket_path, timeout=30) as c:
            tip = c.call("status")["sha"]
            for sha, path in acked:
                assert git(store, "merge-base", "--is-ancestor", sha, tip) == ""
                assert c.call("read", {"path": path})["record"] is not None, path
            # A commit after all that still lands.
            s = c.call("session.open")["session"]
            html = memory_html("After the kill loop", "The store still takes commits.")
            put = {"op": "put", "path": "areas/kill/after.html", "html": html}
            c.call("session.apply", {"session": s, "ops": [put]})
            assert c.call("session.commit", {"session": s})["outcome"] == "committed"
    finally:
        daemon.stop()
    assert len(acked) >= ROUNDS, "the writers got commits through in most rounds"
    assert git(store, "status", "--porcelain", "--untracked-files=all") == ""
    assert [p.name for p in (store / ".git").rglob("*.lock")] == ["headd.lock"], "the flock file"
    assert not list(store.rglob("*.headd-tmp"))
