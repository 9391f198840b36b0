"""``PlaneService`` in process, on a real store and real SQLite files: which thread runs what,
the loop stays free while the writer works, bursts of advances coalesce, failures are kept.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``schedule_update`` running one update per call (no coalescing) -> ``test_a_burst_coalesces``.
- ``_update_loop`` re-raising a HeaddError -> ``test_a_failing_update_is_kept_not_fatal``.
- ``_hook`` never raising -> ``test_a_stopping_daemon_cuts_the_update_at_a_hook_point``.
- ``_quiet_moment`` returning at once -> ``test_an_update_waits_for_the_advances_to_pause…``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from support.git import external_commit
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.plane_service import PlaneService
from headd.wire.methods import IndexRebuild

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _service(tmp_path: Path) -> tuple[PlaneService, str]:
    store = tmp_path / "store"
    sha = make_store(store)
    return PlaneService(store, None, tmp_path / "claude"), sha


def test_writes_and_reads_run_on_their_own_threads(tmp_path: Path) -> None:
    svc, _ = _service(tmp_path)

    async def scenario() -> tuple[str, str]:
        writer = await svc.on_writer(lambda plane: threading.current_thread().name)
        reader = await svc.on_reader(lambda r: threading.current_thread().name)
        return writer, reader

    try:
        writer, reader = asyncio.run(scenario())
    finally:
        svc.shutdown()
    assert writer.startswith("headd-plane-write")
    assert reader.startswith("headd-plane-read")
    assert svc.index_path.is_file() and svc.state_path.is_file()


def test_the_loop_keeps_answering_while_the_writer_works(tmp_path: Path) -> None:
    svc, _ = _service(tmp_path)

    async def scenario() -> int:
        ticks = 0
        slow = asyncio.ensure_future(svc.on_writer(lambda plane: time.sleep(0.6)))
        while not slow.done():
            await asyncio.sleep(0.01)
            ticks += 1
        await slow
        return ticks

    try:
        ticks = asyncio.run(scenario())
    finally:
        svc.shutdown()
    assert ticks >= 10  # the loop ran while the writer thread slept


def test_a_burst_coalesces(tmp_path: Path) -> None:
    svc, sha = _service(tmp_path)

    async def scenario() -> None:
        for _ in range(20):
            svc.schedule_update()
        await svc.wait_idle()
        assert svc.stats.runs == 1 and svc.stats.last_sha == sha
        moved = external_commit(
            svc.store, {"areas/inbox/a.html": memory_html("A is one", "A is one.")}
        )
        svc.schedule_update()
        svc.schedule_update()  # arrives while the first runs: one follow-up at most
        await svc.wait_idle()
        assert 2 <= svc.stats.runs <= 3 and svc.stats.last_sha == moved

    try:
        asyncio.run(scenario())
    finally:
        svc.shutdown()


def test_a_failing_update_is_kept_not_fatal(tmp_path: Path) -> None:
    svc, sha = _service(tmp_path)

    async def scenario() -> None:
        svc.schedule_update()
        await svc.wait_idle()
        with sqlite3.connect(svc.index_path) as conn:
            conn.execute("UPDATE index_state SET head_sha = NULL")
        svc.schedule_update()
        await svc.wait_idle()
        assert svc.stats.last_error_code == "ERR_INDEX_STALE"
        assert svc.status().last_error_code == "ERR_INDEX_STALE"
        report = await svc.answer(IndexRebuild(), NOW)
        assert report.head_sha == sha
        svc.schedule_update()
        await svc.wait_idle()
        assert svc.stats.last_error is None and svc.stats.runs == 2

    try:
        asyncio.run(scenario())
    finally:
        svc.shutdown()


def test_a_stopping_daemon_cuts_the_update_at_a_hook_point(tmp_path: Path) -> None:
    svc, _ = _service(tmp_path)

    async def scenario() -> None:
        await svc.on_writer(lambda plane: None)  # open the files
        svc._stopping.set()  # as stop() does, but keep scheduling allowed for the test
        svc._wanted = True
        svc._updating = asyncio.ensure_future(svc._update_loop())
        await svc.wait_idle()
        assert svc.stats.runs == 0 and svc.stats.last_error is None
        svc.stop()
        svc.schedule_update()
        assert not svc.updating

    try:
        asyncio.run(scenario())
    finally:
        svc.shutdown()
    # Cut before anything was written: no commit recorded, and nothing half-done.
    with sqlite3.connect(svc.index_path) as conn:
        assert conn.execute("SELECT count(*) FROM index_state").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0


def test_an_update_waits_for_the_advances_to_pause_then_covers_them_all(tmp_path: Path) -> None:
    """A burst of commits (advances closer together than the quiet period) runs no update
    while it lasts, then exactly one, at the last commit: the update's work-tree scan never
    competes with the burst's own commits for the GIL."""
    svc, _ = _service(tmp_path)
    svc.update_quiet_s = 1.0
    svc.update_max_wait_s = 60.0

    async def scenario() -> None:
        await svc.on_writer(lambda plane: None)  # open (create) the files
        moved = ""
        for k in range(3):
            moved = external_commit(
                svc.store, {f"areas/inbox/b{k}.html": memory_html(f"B{k} note", f"B{k}.")}
            )
            svc.schedule_update()
            await asyncio.sleep(0.02)
        assert svc.updating and svc.stats.runs == 0  # still waiting for the burst to pause
        await svc.wait_idle()
        assert svc.stats.runs == 1 and svc.stats.last_sha == moved

    try:
        asyncio.run(scenario())
    finally:
        svc.shutdown()


def test_a_steady_stream_of_advances_still_updates_within_the_longest_wait(
    tmp_path: Path,
) -> None:
    svc, sha = _service(tmp_path)
    svc.update_quiet_s = 30.0  # never quiet enough: only the longest wait lets it run
    svc.update_max_wait_s = 0.1

    async def scenario() -> None:
        svc.schedule_update()
        await asyncio.wait_for(svc.wait_idle(), timeout=20)
        assert svc.stats.runs == 1 and svc.stats.last_sha == sha

    try:
        asyncio.run(scenario())
    finally:
        svc.shutdown()


def test_vectors_persist_through_the_writer_from_a_thread_with_no_event_loop(
    tmp_path: Path,
) -> None:
    """``submit`` is what the embed thread calls: no event loop runs anywhere here, and the
    rows still land through the plane's one writer thread (and read back in a new process's
    way, from the file)."""
    import numpy as np

    from headd.daemon.vectors import PlaneVectorStore
    from headd.head.vectors import VectorSpace

    svc, _ = _service(tmp_path)
    space = VectorSpace.parse("hash-test@4")
    vectors = np.eye(4, dtype=np.float32)[:2]
    seen: list[str] = []
    done = threading.Event()

    def embed_thread() -> None:
        PlaneVectorStore(svc.store, svc).append(space, ["h1", "h2"], vectors)
        seen.append(svc.submit(lambda plane: threading.current_thread().name).result())
        done.set()

    try:
        threading.Thread(target=embed_thread).start()
        assert done.wait(60)
    finally:
        svc.shutdown()
    assert seen[0].startswith("headd-plane-write")
    cache = PlaneVectorStore(svc.store).load(space)
    assert len(cache) == 2
    np.testing.assert_array_equal(cache.get("h2"), vectors[1])
