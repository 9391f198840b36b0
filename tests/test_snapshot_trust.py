"""A snapshot is trusted only when this daemon wrote it for that commit.

The forgery is the one a collaborator who can push could attempt: the daemon's own snapshot
format, naming the tip's sha, holding one memory that is in no commit. Written by the daemon
itself (``SnapshotStore.write``) it decodes and serves that memory, which shows the forgery is
real; written as a checkout or a copy would write it, the cold start refuses it and loads from
git. Guard seen failing when broken: ``SnapshotStore._payload`` returning the whole file without
its digest check -> ``test_a_forged_snapshot_is_refused_and_git_serves_the_tip`` decodes the
forgery and serves the memory that is in no commit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest
from support.git import git
from support.head_corpus import make_corpus
from support.memory import memory_html
from support.stores import Store

from headd.daemon.coldstart import GIT, SNAPSHOT, ColdStart, cold_load
from headd.daemon.snapshot_store import MAC_BYTES, SnapshotStore
from headd.errors import StorageFailure
from headd.head import snapshot as snap
from headd.head.version import advance_head, load_head

FORGED = "areas/inbox/forged-fact.html"


def start(repo: pygit2.Repository, tip: str, store: SnapshotStore) -> ColdStart:
    return cold_load(
        repo, tip, store, load_head=load_head, advance_head=advance_head, decode=snap.decode_version
    )


@pytest.fixture
def forged(tmp_path: Path) -> tuple[Store, str, bytes]:
    """(a store, its tip, a snapshot naming the tip that holds one memory in no commit)."""
    repo, tip, _ = make_corpus(tmp_path / "store", 5)
    side = repo.commit([(FORGED, memory_html("Forged fact", "A fact in no commit."))], "side")
    git(repo.root, "reset", "-q", "--hard", tip)
    version = load_head(repo.repo, side)
    object.__setattr__(version, "_sha", tip)
    return repo, tip, snap.encode_version(version)


def test_the_forgery_is_real_when_the_daemon_itself_wrote_it(
    forged: tuple[Store, str, bytes],
) -> None:
    repo, tip, data = forged
    store = SnapshotStore(repo.root)
    store.write(tip, data)
    started = start(repo.repo, tip, store)
    assert started.source == SNAPSHOT and started.version.record(FORGED) is not None


def test_a_forged_snapshot_is_refused_and_git_serves_the_tip(
    forged: tuple[Store, str, bytes],
) -> None:
    repo, tip, data = forged
    store = SnapshotStore(repo.root)
    store.directory.mkdir(parents=True)
    store.path_of(tip).write_bytes(data)  # as a checkout of a pushed file writes it
    started = start(repo.repo, tip, store)
    assert started.source == GIT and started.version.record(FORGED) is None
    assert started.refused and "checksum" in started.refused[0]


def test_a_snapshot_copied_from_another_store_or_renamed_is_refused(
    forged: tuple[Store, str, bytes], tmp_path: Path
) -> None:
    repo, tip, _ = forged
    genuine = snap.encode_version(load_head(repo.repo, tip))
    other_root = tmp_path / "other"
    shutil.copytree(repo.root, other_root)
    shutil.rmtree(other_root / ".git" / "headd", ignore_errors=True)
    other = SnapshotStore(other_root)
    other.write(tip, genuine)
    mine = SnapshotStore(repo.root)
    mine.write("f" * 40, b"anything")  # this store has a key of its own
    mine.directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(other.path_of(tip), mine.path_of(tip))
    with pytest.raises(StorageFailure):
        mine.read(tip)
    # A file this store wrote for one commit, renamed to another, fails too.
    mine.write(tip, genuine)
    shutil.copy(mine.path_of(tip), mine.path_of("e" * 40))
    with pytest.raises(StorageFailure), mine.mapped("e" * 40):
        pass
    assert mine.read(tip) == genuine


def test_the_key_lives_in_the_git_directory_and_only_the_owner_reads_it(
    forged: tuple[Store, str, bytes],
) -> None:
    repo, tip, data = forged
    store = SnapshotStore(repo.root)
    entry = store.write(tip, data)
    assert store.key_path.parent.parent == repo.root / ".git"
    assert store.key_path.stat().st_mode & 0o077 == 0
    assert entry.size == len(data) + MAC_BYTES
