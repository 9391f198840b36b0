"""The daemon's cold start: the tip's snapshot, else an ancestor's advanced, else git.

``cold_load`` runs against real repositories and real snapshot files; the last tests restart
the real ``headd`` process on one store and read ``status.load_source`` over its socket.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir, wait_for
from support.git import external_commit
from support.git import git as run_git
from support.head_corpus import make_corpus, memory_for
from support.memory import memory_html
from support.stores import Store, make_store

from headd.daemon.coldstart import (
    GIT,
    SNAPSHOT,
    SNAPSHOT_ADVANCE,
    ColdStart,
    candidates,
    cold_load,
    plan_candidates,
)
from headd.daemon.main import main
from headd.daemon.plane_service import PlaneService
from headd.daemon.snapshot_store import SnapshotStore
from headd.head import snapshot as snap
from headd.head.version import HeadVersion, advance_head, load_head

REPO = Path(__file__).resolve().parents[1]

# -- the plan (pure) ------------------------------------------------------------------------------


def test_the_plan_prefers_the_tip_then_ancestors_newest_first() -> None:
    ancestors = {"b", "d"}
    plan = plan_candidates(["a", "b", "tip", "c", "d"], "tip", ancestors.__contains__)
    assert plan == [("tip", SNAPSHOT), ("b", SNAPSHOT_ADVANCE), ("d", SNAPSHOT_ADVANCE)]
    assert plan_candidates([], "tip", lambda _s: True) == []
    assert plan_candidates(["x"], "tip", lambda _s: False) == []


def test_the_tips_own_snapshot_is_tried_before_any_history_is_walked() -> None:
    asked: list[str] = []

    def is_ancestor(sha: str) -> bool:
        asked.append(sha)
        return True

    lazily = candidates(["a", "tip", "b"], "tip", is_ancestor)
    assert next(lazily) == ("tip", SNAPSHOT) and asked == []
    assert list(lazily) == [("a", SNAPSHOT_ADVANCE), ("b", SNAPSHOT_ADVANCE)]
    assert asked == ["a", "b"]


# -- cold_load on real repositories ------------------------------------------------------------


class Loads:
    """Counts the git loads and advances ``cold_load`` asks for."""

    def __init__(self) -> None:
        self.loads = 0
        self.advances = 0

    def load(self, repo: pygit2.Repository, sha: str) -> HeadVersion:
        self.loads += 1
        return load_head(repo, sha, workers=1)

    def advance(self, repo: pygit2.Repository, parent: HeadVersion, sha: str) -> HeadVersion:
        self.advances += 1
        return advance_head(repo, parent, sha)


def start(repo: Store, store: SnapshotStore, tip: str, loads: Loads) -> ColdStart:
    return cold_load(
        repo.repo,
        tip,
        store,
        load_head=loads.load,
        advance_head=loads.advance,
        decode=snap.decode_version,
    )


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Store, str, SnapshotStore]:
    repo, sha, _files = make_corpus(tmp_path / "store", 20)
    # Several snapshots, so the fallbacks from one to an older one are reachable.
    return repo, sha, SnapshotStore(tmp_path / "store", keep=3)


def test_without_snapshots_it_loads_from_git(
    corpus: tuple[Store, str, SnapshotStore],
) -> None:
    repo, sha, store = corpus
    loads = Loads()
    started = start(repo, store, sha, loads)
    assert started.source == GIT and loads.loads == 1


def test_the_tips_own_snapshot_is_decoded_without_git(
    corpus: tuple[Store, str, SnapshotStore],
) -> None:
    repo, sha, store = corpus
    loaded = load_head(repo.repo, sha)
    store.write(sha, snap.encode_version(loaded))
    loads = Loads()
    started = start(repo, store, sha, loads)
    assert started.source == SNAPSHOT and started.snapshot_sha == sha
    assert loads.loads == 0 and loads.advances == 0
    assert started.version.indexes == loaded.indexes


def test_an_ancestors_snapshot_is_advanced_over_the_difference(
    corpus: tuple[Store, str, SnapshotStore],
) -> None:
    repo, sha, store = corpus
    store.write(sha, snap.encode_version(load_head(repo.repo, sha)))
    repo.commit([(memory_for(50).path, memory_for(50).html)], "one more")
    tip = repo.commit([(memory_for(3).path, None)], "one less")
    loads = Loads()
    started = start(repo, store, tip, loads)
    assert started.source == SNAPSHOT_ADVANCE
    assert started.snapshot_sha == sha
    assert loads.loads == 0 and loads.advances == 1
    version = started.version
    assert version.sha == tip and version.parent is None
    assert version.indexes == load_head(repo.repo, tip).indexes


def test_a_snapshot_of_a_commit_off_the_tips_history_is_not_used(
    corpus: tuple[Store, str, SnapshotStore],
) -> None:
    repo, sha, store = corpus
    side = repo.commit([(memory_for(60).path, memory_for(60).html)], "side")
    store.write(side, snap.encode_version(load_head(repo.repo, side)))
    repo.repo.reset(pygit2.Oid(hex=sha), pygit2.enums.ResetMode.HARD)
    tip = repo.commit([(memory_for(61).path, memory_for(61).html)], "main line")
    store.write("f" * 40, b"a commit this repository does not have")
    loads = Loads()
    started = start(repo, store, tip, loads)
    assert started.source == GIT and loads.advances == 0


def test_a_corrupt_snapshot_falls_back_with_a_warning(
    corpus: tuple[Store, str, SnapshotStore], caplog: pytest.LogCaptureFixture
) -> None:
    repo, sha, store = corpus
    data = bytearray(snap.encode_version(load_head(repo.repo, sha)))
    data[len(data) // 2] ^= 0x01
    store.write(sha, bytes(data))
    loads = Loads()
    with caplog.at_level(logging.WARNING, logger="headd.daemon.coldstart"):
        started = start(repo, store, sha, loads)
    assert started.source == GIT and loads.loads == 1
    assert "checksum" in started.refused[0]
    assert any("not used" in r.message and r.levelno == logging.WARNING for r in caplog.records)


def test_a_bad_tip_snapshot_falls_back_to_a_good_ancestor(
    corpus: tuple[Store, str, SnapshotStore],
) -> None:
    repo, sha, store = corpus
    store.write(sha, snap.encode_version(load_head(repo.repo, sha)))
    tip = repo.commit([(memory_for(70).path, memory_for(70).html)], "newer")
    store.write(tip, snap.encode_version(load_head(repo.repo, tip), stamp=b"older headd"))
    loads = Loads()
    started = start(repo, store, tip, loads)
    assert started.source == SNAPSHOT_ADVANCE and started.snapshot_sha == sha
    assert "ERR_INDEX_STALE" in started.refused[0]
    assert started.version.indexes == load_head(repo.repo, tip).indexes


# -- the real daemon, restarted ------------------------------------------------------------------


def status_of(daemon: Daemon) -> dict[str, Any]:
    with Client(daemon.socket_path, timeout=30) as client:
        result = client.call("status", {})
    assert isinstance(result, dict)
    return result


def run_once(store: Path, *, until_snapshot: bool = False) -> tuple[dict[str, Any], str]:
    """Start the daemon, read its status (after its snapshot write, if asked), stop it."""
    daemon = Daemon(
        store, short_socket_dir() / "head.sock", extra=["--snapshot-interval", "0"]
    ).wait_ready(timeout=60)
    try:
        status = status_of(daemon)
        if until_snapshot:
            assert wait_for(
                lambda: (status_of(daemon)["snapshot"] or {}).get("last_sha") == status["sha"],
                timeout=30,
            ), daemon.log()
            status = status_of(daemon)
    finally:
        assert daemon.stop() == 0
    return status, daemon.log()


def test_a_restarted_daemon_starts_from_its_snapshot_then_advances_then_refuses_bad_ones(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    seed = make_store(store)
    snapshots = SnapshotStore(store)

    first, _log = run_once(store, until_snapshot=True)
    assert first["load_source"] == "git" and first["sha"] == seed
    assert snapshots.has(seed)

    again, _log = run_once(store)
    assert again["load_source"] == "snapshot" and again["sha"] == seed
    assert again["records"] == first["records"] and again["skipped"] == first["skipped"]
    assert (again["snapshot"] or {})["writes"] == 0  # nothing new to write

    tip = external_commit(
        store,
        {"areas/inbox/written-while-down.html": memory_html("Written while down", "Ravens fly.")},
    )
    advanced, _log = run_once(store, until_snapshot=True)
    assert advanced["load_source"] == "snapshot+advance" and advanced["sha"] == tip
    assert advanced["records"] == int(first["records"]) + 1
    assert snapshots.has(tip)

    for entry in snapshots.entries():  # damage every snapshot: the daemon must use git
        data = bytearray(entry.path.read_bytes())
        data[-3] ^= 0xFF
        entry.path.write_bytes(bytes(data))
    damaged, log_text = run_once(store)
    assert damaged["load_source"] == "git" and damaged["sha"] == tip
    assert damaged["records"] == advanced["records"]
    assert "WARNING" in log_text and "not used" in log_text and "checksum" in log_text

    for entry in snapshots.entries():  # a snapshot of another format: refused as stale
        entry.path.unlink()
    good = snap.encode_version(load_head(pygit2.Repository(str(store)), tip))
    stale = bytearray(good)
    stale[8:12] = (snap.FORMAT_VERSION + 7).to_bytes(4, "little")
    snapshots.write(tip, bytes(stale))
    stale_status, log_text = run_once(store, until_snapshot=True)
    assert stale_status["load_source"] == "git"
    assert "ERR_INDEX_STALE" in log_text
    # The refused file was replaced by a good one, so the next start decodes again.
    healed, _log = run_once(store)
    assert healed["load_source"] == "snapshot" and healed["sha"] == tip
    run_git(store, "status")  # the store itself was never touched


# -- what waits until after READY ---------------------------------------------------------------


def test_the_daemon_imports_no_plane_search_gate_or_session_code_before_it_runs() -> None:
    """The module the console script loads pulls in none of what READY does not need, nor the
    daemon itself, which ``run`` imports once ``main`` has turned the cyclic collector off."""
    deferred = (
        "asyncio",
        "pygit2",
        "numpy",
        "msgspec",
        "headd.daemon.handlers",
        "headd_plane.plane",
        "headd_plane.retrieval",
        "headd_plane.recall",
        "headd.head.search",
        "headd.head.gate",
        "headd.head.overlay",
        "headd.store.manager",
        "onnxruntime",
        "headd_client",
    )
    probe = f"import sys, headd.daemon.main; print([m for m in {deferred!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=str(REPO), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_main_leaves_the_cyclic_collector_as_it_found_it_when_it_cannot_start(
    tmp_path: Path,
) -> None:
    """``main`` turns the collector off for the imports and the load; a caller in the same
    process gets it back on whichever way ``main`` returns."""
    assert gc.isenabled()
    assert main(["--store", str(tmp_path), "--socket", str(tmp_path / "head.sock")]) == 1
    assert gc.isenabled()


def test_the_plane_opened_in_the_background_is_waited_for_by_readers(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    plane = PlaneService(store, None, tmp_path / "claude")

    async def scenario() -> bool:
        plane.open_in_background()
        plane.open_in_background()  # once
        return bool(await plane.on_reader(lambda retrieval: retrieval.db is not None))

    try:
        assert asyncio.run(scenario())
    finally:
        plane.shutdown()
    assert plane.index_path.is_file() and plane.state_path.is_file()
