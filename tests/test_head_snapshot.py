"""Head snapshots: a version as bytes and back (``headd.head.snapshot``), and their files.

Every version here is loaded from a real git repository (pygit2 on a temp dir); a decoded
snapshot must equal the loaded version (``Indexes`` equality: records, every multi-map, the
lexical buckets and lengths), keep its skipped files, and answer searches identically.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

import msgspec
import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import pmap
from support.head_corpus import BROKEN_HTML, make_corpus, memory_for

from headd.daemon.snapshot_store import SnapshotStore
from headd.errors import IndexStale, StorageFailure
from headd.head import snapshot as snap
from headd.head.search import search_head
from headd.head.version import HeadVersion, advance_head, load_head

REPO = Path(__file__).resolve().parents[1]


def assert_same(decoded: HeadVersion, loaded: HeadVersion) -> None:
    assert decoded.sha == loaded.sha
    assert decoded.indexes == loaded.indexes
    assert sorted(decoded.skipped, key=lambda s: s.path) == sorted(
        loaded.skipped, key=lambda s: s.path
    )
    assert decoded.indexes.lexical.document_lengths() == loaded.indexes.lexical.document_lengths()


def test_anchor_corpus_round_trips_and_searches_the_same(anchor_store: Path) -> None:
    repo = pygit2.Repository(str(anchor_store))
    sha = str(repo.head.target)
    loaded = load_head(repo, sha, workers=1)
    decoded = snap.decode_version(snap.encode_version(loaded), expected_sha=sha)
    assert_same(decoded, loaded)
    assert decoded.parent is None
    for query in ("postgres replica", "deploy train", "user prefers", "memory index"):
        assert search_head(decoded, query) == search_head(loaded, query)


def test_decoded_buckets_are_read_only(tmp_path: Path) -> None:
    repo, sha, _files = make_corpus(tmp_path, 8)
    decoded = snap.decode_version(snap.encode_version(load_head(repo.repo, sha)))
    bucket = next(iter(decoded.lexical.postings.values()))
    with pytest.raises(ValueError):
        bucket.ids[0] = 7
    with pytest.raises(ValueError):
        decoded.lexical.lengths[0] = 1.0


def test_decoded_records_share_one_object_per_vocabulary_value(tmp_path: Path) -> None:
    repo, sha, _files = make_corpus(tmp_path, 12)
    decoded = snap.decode_version(snap.encode_version(load_head(repo.repo, sha)))
    records = list(decoded.records())
    for name in ("memory_type", "status", "para"):
        values = [getattr(r, name) for r in records]
        assert len({id(v) for v in values}) == len(set(values)), name
    assert all(r.disclosure is None and r.disclosure_text is r.claim for r in records)


# -- property: random small stores ---------------------------------------------------------

FILE_KIND = st.sampled_from(["plain", "archived", "twin", "broken", "empty_claimless"])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.tuples(FILE_KIND, st.integers(0, 60)), min_size=0, max_size=10),
    edits=st.lists(st.integers(0, 60), max_size=3),
)
def test_property_a_decoded_snapshot_equals_the_loaded_version_and_advances_alike(
    kinds: list[tuple[str, int]], edits: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, _sha, _files = make_corpus(Path(tmp), 0)
        changes: dict[str, str] = {}
        for position, (kind, index) in enumerate(kinds):
            generated = memory_for(index)
            if kind == "plain":
                changes[generated.path] = generated.html
            elif kind == "archived":
                changes[f"archive/2026/areas/inbox/old-{position}.html"] = generated.html
            elif kind == "twin":
                changes[generated.path] = generated.html
                changes[f"resources/twins/twin-{position}.html"] = generated.html
            elif kind == "broken":
                changes[f"areas/inbox/broken-{position}.html"] = BROKEN_HTML
            else:
                changes[f"projects/p/{position}.html"] = generated.html.replace(
                    f"Country{index}", "x"
                )
        sha = repo.commit(changes.items(), "random")
        loaded = load_head(repo.repo, sha, workers=1)
        decoded = snap.decode_version(snap.encode_version(loaded), expected_sha=sha)
        assert_same(decoded, loaded)
        # A decoded version is a parent like any other: advancing it gives what a load gives.
        target = repo.commit(
            [(memory_for(100 + e).path, memory_for(100 + e).html) for e in edits]
            + [(path, None) for path in list(changes)[:1]],
            "edits",
        )
        assert_same(advance_head(repo.repo, decoded, target), load_head(repo.repo, target))


# -- ids numbered differently in the decoding process ----------------------------------------

_OTHER_PROCESS = """
import sys, pygit2
from headd.head.ids import PATH_IDS
from headd.head import snapshot
from headd.head.version import load_head
repo = pygit2.Repository(sys.argv[1])
sha = str(repo.head.target)
data = open(sys.argv[2], "rb").read()
body = snapshot.decode_body(data)
for record in reversed(body.records):  # number the paths in the opposite order first
    PATH_IDS.intern(record.path)
decoded = snapshot.decode_version(data, expected_sha=sha)
loaded = load_head(repo, sha, workers=1)
assert decoded.indexes == loaded.indexes, "differs"
ids = [b.ids for b in decoded.lexical.postings.values()]
assert all((a[1:] > a[:-1]).all() for a in ids), "a bucket is not ascending"
print("same", len(ids))
"""


def test_a_process_that_numbers_paths_otherwise_rebuilds_equal_sorted_buckets(
    tmp_path: Path,
) -> None:
    repo, sha, _files = make_corpus(tmp_path / "store", 30)
    path = tmp_path / "head.snap"
    path.write_bytes(snap.encode_version(load_head(repo.repo, sha)))
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(tmp_path / "store"), str(path)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("same ")


# -- refusals ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_snapshot(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str]:
    repo, sha, _files = make_corpus(tmp_path_factory.mktemp("snap") / "store", 12)
    return snap.encode_version(load_head(repo.repo, sha)), sha


def test_a_flipped_byte_anywhere_in_the_body_is_refused(small_snapshot: tuple[bytes, str]) -> None:
    data, sha = small_snapshot
    for offset in (snap.HEADER_SIZE, len(data) // 2, len(data) - 1):
        damaged = bytearray(data)
        damaged[offset] ^= 0x20
        with pytest.raises(StorageFailure):
            snap.decode_version(bytes(damaged), expected_sha=sha)


def test_the_threaded_checksum_refuses_a_flipped_byte_and_passes_the_whole(
    small_snapshot: tuple[bytes, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bodies past ``PARALLEL_CRC_BYTES`` are checksummed on a thread beside the decode: the
    same refusals (a bad checksum wins over a body that does not decode), the same version."""
    data, sha = small_snapshot
    monkeypatch.setattr(snap, "PARALLEL_CRC_BYTES", 1)
    assert snap.decode_version(data, expected_sha=sha).indexes == (
        snap.decode_version(data, expected_sha=sha).indexes
    )
    for offset in (snap.HEADER_SIZE, len(data) // 2, len(data) - 1):
        damaged = bytearray(data)
        damaged[offset] ^= 0x20
        with pytest.raises(StorageFailure, match="checksum"):
            snap.decode_version(bytes(damaged), expected_sha=sha)
    with memoryview(bytes(range(256)) * 8192) as big:
        assert snap._Crc32(big).value() == zlib.crc32(big)


def test_truncated_or_foreign_bytes_are_refused(small_snapshot: tuple[bytes, str]) -> None:
    data, _sha = small_snapshot
    for bad in (b"", data[:10], data[: len(data) // 2], b"NOTASNAP" + data[8:]):
        with pytest.raises(StorageFailure):
            snap.decode_version(bad)


def test_another_commit_is_refused(small_snapshot: tuple[bytes, str]) -> None:
    data, _sha = small_snapshot
    with pytest.raises(StorageFailure, match="another commit"):
        snap.decode_version(data, expected_sha="0" * 40)


def test_a_snapshot_of_another_format_or_other_code_is_stale(
    small_snapshot: tuple[bytes, str],
) -> None:
    data, sha = small_snapshot
    other_format = bytearray(data)
    other_format[8:12] = (snap.FORMAT_VERSION + 1).to_bytes(4, "little")
    with pytest.raises(IndexStale, match="format"):
        snap.decode_version(bytes(other_format), expected_sha=sha)
    with pytest.raises(IndexStale, match="other code"):
        snap.decode_version(data, expected_sha=sha, stamp=b"another parser")
    written_elsewhere = snap.encode_version(snap.decode_version(data), stamp=b"another parser")
    with pytest.raises(IndexStale):
        snap.decode_version(written_elsewhere)
    assert snap.decode_version(written_elsewhere, stamp=b"another parser").sha == sha


class _Widened(msgspec.Struct, frozen=True):
    path: str
    reason: str
    extra: int = 0


class _Retyped(msgspec.Struct, frozen=True):
    path: str
    reason: int


def test_the_guard_changes_with_any_struct_field() -> None:
    base = snap.schema_fingerprint()
    assert base == snap.schema_fingerprint()
    swapped = tuple(_Widened if t.__name__ == "SkippedFile" else t for t in snap.SNAPSHOT_STRUCTS)
    retyped = tuple(_Retyped if t.__name__ == "SkippedFile" else t for t in snap.SNAPSHOT_STRUCTS)
    # Names alone do not make the hash: the renamed structs must carry the same name to compare.
    _Widened.__name__ = _Retyped.__name__ = "SkippedFile"
    assert snap.schema_fingerprint(swapped) != base
    assert snap.schema_fingerprint(retyped) != base
    assert snap.schema_fingerprint(swapped) != snap.schema_fingerprint(retyped)


def test_the_code_stamp_changes_when_the_parser_source_changes(tmp_path: Path) -> None:
    package = Path(snap.__file__).resolve().parents[1]
    copy = tmp_path / "headd"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert snap.stamp_of_sources(copy) == snap.code_stamp()
    parse = copy / "memfile" / "parse.py"
    parse.write_text(parse.read_text(encoding="utf-8") + "\n# a rule changed\n", "utf-8")
    assert snap.stamp_of_sources(copy) != snap.code_stamp()


# -- the files ---------------------------------------------------------------------------------

SHA_A, SHA_B, SHA_C, SHA_D = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)


def test_the_store_writes_atomically_lists_newest_first_and_keeps_a_few(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path, keep=3)
    assert store.entries() == [] and store.read(SHA_A) is None
    for number, sha in enumerate((SHA_A, SHA_B, SHA_C, SHA_D)):
        entry = store.write(sha, sha.encode() * 3)
        os.utime(entry.path, ns=(time.time_ns(), 1_000_000_000 * (number + 1)))
    entries = store.entries()
    assert [e.sha for e in entries] == [SHA_D, SHA_C, SHA_B]  # the oldest was pruned at write 4
    assert store.read(SHA_C) == SHA_C.encode() * 3
    assert not store.has(SHA_A)
    assert sorted(os.listdir(store.directory)) == sorted(f"{s}.snap" for s in (SHA_B, SHA_C, SHA_D))


def test_by_default_the_store_keeps_only_the_newest_snapshot(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.write(SHA_A, b"a")
    os.utime(store.path_of(SHA_A), ns=(time.time_ns(), 1_000_000_000))
    store.write(SHA_B, b"b")
    assert [e.sha for e in store.entries()] == [SHA_B]


def test_the_store_refuses_a_name_that_is_not_a_sha(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    with pytest.raises(ValueError):
        store.path_of("../../etc/passwd")
    store.directory.mkdir(parents=True)
    (store.directory / "notes.snap").write_bytes(b"x")
    (store.directory / ".tmp-123.snap").write_bytes(b"x")
    assert store.entries() == []
    store.prune()
    assert not (store.directory / ".tmp-123.snap").exists()


# -- what a decode leaves for first use -------------------------------------------------------


def test_a_decode_leaves_the_maps_pending_and_they_build_equal_on_first_use(
    tmp_path: Path,
) -> None:
    repo, sha, _files = make_corpus(tmp_path, 12)
    loaded = load_head(repo.repo, sha, workers=1)
    decoded = snap.decode_version(snap.encode_version(loaded))
    lexical = decoded.indexes.lexical.postings
    multi = decoded.indexes.content_paths
    records = decoded.indexes.records
    assert isinstance(lexical, snap.PendingMap) and lexical.pending
    assert isinstance(multi, snap.PendingMap) and multi.pending
    assert isinstance(records, snap.PendingMap) and records.pending
    assert len(lexical) == len(loaded.indexes.lexical.postings) and lexical.pending
    assert decoded.size == loaded.size == 12 and records.pending
    assert snap.settle_version(decoded) is True
    assert not lexical.pending and not multi.pending and not records.pending
    assert records == loaded.indexes.records and hash(records) == hash(loaded.indexes.records)
    assert snap.settle_version(decoded) is False
    assert_same(decoded, loaded)
    for name in ("by_content_hash", "content_paths", "by_frame_key", "inbound", "by_entity"):
        built, eager = getattr(decoded.indexes, name), getattr(loaded.indexes, name)
        assert built == eager and dict(built) == dict(eager) and hash(built) == hash(eager)


def test_a_pending_map_reads_and_evolves_like_a_pmap_before_it_is_built() -> None:
    calls: list[int] = []

    def build() -> dict[str, int]:
        calls.append(1)
        return {"a": 1, "b": 2}

    def fresh() -> snap.PendingMap:
        return snap.PendingMap(build)

    assert fresh() == pmap({"a": 1, "b": 2}) and len(fresh()) == 2
    assert fresh().get("a") == 1 and "b" in fresh() and fresh().get("z") is None
    assert sorted(fresh().items()) == [("a", 1), ("b", 2)]
    assert fresh().set("c", 3) == pmap({"a": 1, "b": 2, "c": 3})
    assert fresh().remove("a") == pmap({"b": 2})
    evolver = fresh().evolver()
    evolver["d"] = 4
    assert evolver.persistent() == pmap({"a": 1, "b": 2, "d": 4})
    assert hash(fresh()) == hash(pmap({"a": 1, "b": 2}))
    once = fresh()
    before = len(calls)
    assert once["a"] == 1 and once["b"] == 2 and len(once) == 2
    assert len(calls) == before + 1  # built once, then an ordinary PMap


def test_a_pending_map_is_built_once_under_concurrent_first_reads() -> None:
    calls: list[int] = []
    gate = threading.Event()

    def build() -> dict[int, int]:
        calls.append(1)
        gate.wait(1)
        return {i: i for i in range(1000)}

    shared = snap.PendingMap(build, 1000)
    results: list[int | None] = []
    threads = [threading.Thread(target=lambda: results.append(shared.get(7))) for _ in range(4)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
    assert results == [7, 7, 7, 7] and calls == [1]


def test_a_snapshot_decodes_from_its_memory_mapped_file(
    tmp_path: Path, small_snapshot: tuple[bytes, str]
) -> None:
    data, sha = small_snapshot
    store = SnapshotStore(tmp_path)
    with store.mapped(sha) as missing:
        assert missing is None
    store.write(sha, data)
    with store.mapped(sha) as view:
        assert view is not None and bytes(view) == data
        decoded = snap.decode_version(view, expected_sha=sha)
    assert decoded.indexes == snap.decode_version(data).indexes
    damaged = bytearray(data)
    damaged[-3] ^= 0xFF
    store.write(sha, bytes(damaged))
    # A refused decode releases every view it took, so the mapping still closes.
    with pytest.raises(StorageFailure), store.mapped(sha) as view:
        snap.decode_version(view)
