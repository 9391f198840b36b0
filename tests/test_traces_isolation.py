"""Retrieval of memories never reads a trace table: transcripts are searched with
``traces.search`` only, never mixed into memory search or recall."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from headd_plane.plane import open_plane
from headd_plane.traces import traces_index
from support.memory import memory_html
from support.stores import Store
from support.transcripts import sample_tree

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_search_and_recall_read_no_trace_table(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit({"areas/inbox/a.html": memory_html("Zebra", "The zebra crossing is on Main.")})
    plane = open_plane(store.root, now=lambda: "2026-11-30T12:00:00Z")
    plane.rebuild()
    root = sample_tree(tmp_path / "claude")
    assert traces_index(plane.db.conn, root, NOW)["sessions"] > 0

    read: set[str] = set()

    def authorizer(action: int, arg1: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and arg1:
            read.add(arg1)
        return sqlite3.SQLITE_OK

    plane.retrieval.db.conn.set_authorizer(authorizer)
    try:
        hits = plane.search("zebra crossing").hits
        plane.recall("zebra crossing")
        plane.search("session prompt claude")
    finally:
        plane.retrieval.db.conn.set_authorizer(None)
    assert [h.path for h in hits] == ["areas/inbox/a.html"]
    assert "files" in read, "the authorizer saw the memory tables"
    assert not {t for t in read if t.startswith(("trace", "memory_session"))}, read
