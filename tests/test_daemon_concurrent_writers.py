"""Sixteen agents writing at once through the real daemon's socket: every write lands, first try.

Each writer holds its own connection and session and commits twenty distinct new memories one
at a time, with ``session.commit``'s default ``rebase: "auto"``: a commit queued behind another
finds its base stale inside the commit lock and is rebased there, so no client ever sees
``rebase-needed`` for a write nothing conflicts with.

Mutation note: ``rebase == REBASE_AUTO`` in ``SessionManager.commit`` -> ``False`` makes most
commits answer ``rebase-needed`` and this test red.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pygit2
import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.git import git
from support.stores import make_store

from bench.concurrency_bench import write_op  # the writes the bench makes
from headd.head.version import load_head

WRITERS = 16
WRITES = 20


@pytest.mark.slow
def test_sixteen_writers_land_every_write_with_no_retry(tmp_path: Path) -> None:
    store = tmp_path / "store"
    base = make_store(store)
    socket_path = short_socket_dir() / "w.sock"
    daemon = Daemon(store, socket_path).wait_ready()
    outcomes: list[list[str]] = [[] for _ in range(WRITERS)]
    failures: list[BaseException] = []
    barrier = threading.Barrier(WRITERS)

    def writer(w: int) -> None:
        try:
            with Client(socket_path, timeout=120) as c:
                session = c.call("session.open", {"id": f"writer-{w}"})["session"]
                barrier.wait()
                for n in range(WRITES):
                    applied = c.call("session.apply", {"session": session, "ops": [write_op(w, n)]})
                    assert applied["ops"] == 1 and not applied.get("violations"), applied
                    result = c.call("session.commit", {"session": session})
                    outcomes[w].append(result["outcome"])
                c.call("session.close", {"session": session})
        except BaseException as exc:  # reported below, with the daemon's log
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads)
        assert not failures, f"{failures[0]!r}\n{daemon.log()[-4000:]}"
    finally:
        daemon.stop()
    counts = Counter(outcome for history in outcomes for outcome in history)
    assert counts == Counter({"committed": WRITERS * WRITES}), counts
    final = git(store, "rev-parse", "refs/heads/main")
    chain = git(store, "rev-list", "--first-parent", f"{base}..{final}").splitlines()
    assert len(chain) == WRITERS * WRITES
    assert git(store, "rev-list", "--merges", f"{base}..{final}") == ""
    version = load_head(pygit2.Repository(str(store)), final)
    claims = Counter(
        record.claim
        for path in version.paths()
        if (record := version.record(path)) is not None and record.claim.startswith("Host w")
    )
    assert len(claims) == WRITERS * WRITES and set(claims.values()) == {1}, "no write twice"
    assert git(store, "status", "--porcelain") == ""
