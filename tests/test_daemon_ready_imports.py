"""What a daemon starting from its snapshot has imported by READY (READY within 0.5 s at 10,000
memories).

numpy is 110-160 ms of CPU to import, a quarter of a cold start from a snapshot; nothing before
READY needs it (the decode leaves the lexical buckets and lengths, the only numpy values, to
first use), so the daemon imports it on a worker thread after READY. A module-level ``import
numpy`` on the way to READY would silently bring the cost back: this starts the real daemon from
a snapshot and reads the DEBUG line it logs at READY.
"""

from __future__ import annotations

import re
from pathlib import Path

import pygit2
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.stores import make_store

from headd.daemon.snapshot_store import SnapshotStore
from headd.head import snapshot as snap
from headd.head.version import load_head


def test_a_start_from_a_snapshot_reaches_ready_without_numpy_and_then_searches(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    tip = make_store(store)
    SnapshotStore(store).write(
        tip, snap.encode_version(load_head(pygit2.Repository(str(store)), tip))
    )
    daemon = Daemon(
        store,
        short_socket_dir() / "head.sock",
        extra=["--snapshot-interval", "0", "--log-level", "DEBUG"],
    ).wait_ready(timeout=60)
    try:
        with Client(daemon.socket_path, timeout=30) as client:
            status = client.call("status", {})
            hits = client.call("search", {"query": "postgres system of record"})
    finally:
        assert daemon.stop() == 0
    log_text = daemon.log()
    assert isinstance(status, dict) and status["load_source"] == "snapshot", log_text
    found = re.search(r"heavy modules loaded at READY: (\S+)", log_text)
    assert found is not None, log_text
    assert "numpy" not in found.group(1).split(","), log_text
    assert isinstance(hits, dict), hits
    assert hits["hits"][0]["path"] == "areas/inbox/postgres-is-the-system-of-record.html", hits
