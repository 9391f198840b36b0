"""The daemon's plane follows the work tree through inotify: the watch starts with the plane's
open (after READY), its first update scans every file, later ones only what was touched, and
the watch goes with the plane at shutdown. ``PlaneService`` on a real store, ``git`` itself
committing.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``_writer_plane`` not starting the watch -> ``test_the_daemon_plane_updates_from_the_watch``.
- ``shutdown`` not closing it -> ``test_the_daemon_plane_updates_from_the_watch``.
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.git import external_commit
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.plane_service import PlaneService
from headd.wire.methods import IndexUpdate

NOW = datetime(2026, 12, 1, tzinfo=UTC)

pytestmark = pytest.mark.skipif(os.uname().sysname != "Linux", reason="inotify is Linux's")


def _count_full_scans(plane: Any) -> list[int]:
    git = plane.indexer.git
    whole = git._status_of_all
    scans = [0]

    def counted(record: bool) -> dict[str, int]:
        scans[0] += 1
        return whole(record)

    git._status_of_all = counted
    return scans


def test_the_daemon_plane_updates_from_the_watch(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    svc = PlaneService(store, None, tmp_path / "claude")
    edited = "areas/inbox/deploys-run-through-the-release-train.html"

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], int, Any]:
        svc.open_in_background()
        plane = await svc.on_writer(lambda p: p)
        assert plane.indexer.git._watch is not None and plane.indexer.git._watch.active
        scans = _count_full_scans(plane)
        await svc.answer(IndexUpdate(embed=False), NOW)  # the first builds the index: no status
        await svc.answer(IndexUpdate(embed=False), NOW)  # the first status: a full scan
        assert scans[0] == 1
        (store / edited).write_text(
            memory_html("Deploys run any day", "Deploys run any day now."), encoding="utf-8"
        )
        external_commit(store, {"areas/inbox/new.html": memory_html("A new one", "A new memory.")})
        report = await svc.answer(IndexUpdate(embed=False), NOW)
        title = await svc.on_writer(
            lambda p: p.db.get("SELECT title FROM files WHERE path = ?", (edited,))[0]
        )
        return report, {"title": title}, scans[0], plane.indexer.git._watch

    try:
        report, row, scans, watch = asyncio.run(scenario())
    finally:
        svc.shutdown()
    assert report.added == 1 and report.dirty == 1
    assert row["title"] == "Deploys run any day"
    assert scans == 1  # the second update asked git about the touched paths only
    assert not watch.active  # closed with the plane


def test_a_daemon_told_not_to_watch_scans(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    svc = PlaneService(store, None, tmp_path / "claude")
    svc.watches_work_tree = False
    try:
        plane = asyncio.run(svc.on_writer(lambda p: p))
        assert plane.indexer.git._watch is None
    finally:
        svc.shutdown()
