"""A version as bytes and back, so a cold start does not re-parse the store.

Loading a version from git is dominated by the parser (seconds at 10,000 files). A snapshot keeps
what the parser produced (the records, msgspec msgpack) and what tokenizing produced (the lexical
index as flat arrays: every token once, its bucket size, then the concatenated document numbers
and term frequencies), so decoding is an inflate, a msgpack decode and array slicing. The small
multi-maps (content hash, frame key, inbound, entity) are rebuilt from the records with one
loop: that is cheaper than persisting them and cannot disagree with the records. The records map,
the multi-maps and the lexical buckets are :class:`PendingMap` values, built at first use (or by
:func:`settle_version`, which the daemon runs right after READY): that leaves the msgpack decode,
the checks and the lengths before the first answer, a little over half of a whole decode's CPU.

Layout: ``MAGIC | u32 format | 32-byte guard | u32 crc32(body) | body``; the body is a run of
sections, each a u32 length and one zstd frame of msgpack: a head (the commit, how many records
and record sections follow, the skipped files), the records :data:`RECORDS_PER_SECTION` at a
time, then the lexical arrays. zstd because its inflate is a quarter of zlib's CPU at a smaller
size (docs/design/coldstart.md); sections because a section inflates on a thread (zstd releases
the GIL) while the one before it decodes, and because then neither side ever holds the whole
inflated body (five times the stored one). The body's checksum runs on a thread too.

The guard is a hash of the record schema (every field of :class:`MemoryRecord` and its nested
structs, with types and defaults), the stop words and a code stamp supplied by the caller (a
hash of the parser's and the indexer's sources, see :func:`code_stamp`), so a snapshot written
by other code is refused (:class:`IndexStale`) instead of decoding into wrong values. A body
whose checksum, sections or msgpack do not hold is refused (:class:`StorageFailure`). The caller
falls back to git on either.

Document numbers in the body are positions in the record list (records sorted by the writer's
path id), and are mapped to this process's ``PATH_IDS`` on decode; when that mapping is not
increasing (the process already numbered other paths) each bucket is re-sorted with one global
sort, so the buckets are exactly what a load would build.

Pure: no I/O except :func:`code_stamp`, which reads the package's own source files once.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import struct
import sys
import threading
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
from pyrsistent import PMap, pmap

from headd.errors import IndexStale, StorageFailure
from headd.head.ids import PATH_IDS
from headd.head.indexes import Indexes, multi_bucket
from headd.head.lexical import POSTING_ID, POSTING_TF, STOP_WORDS, LexicalIndex, Postings
from headd.head.version import HeadVersion, SkippedFile, collector_paused
from headd.lazy_import import LazyModule
from headd.record import Citation, EntityRow, Facet, Link, MemoryRecord

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy", globals(), "np")

MAGIC: Final = b"HEADDSNP"
#: Bump when the layout below changes.
FORMAT_VERSION: Final = 3
#: zstd's level for each section (docs/design/coldstart.md has the measurement): level 1 is
#: smaller than zlib's level 1 and encodes and inflates four to five times faster; level 3 saves
#: another 7 % at twice the encode CPU.
COMPRESS_LEVEL: Final = 1
_HEADER = struct.Struct("<8sI32sI")
_SECTION_LENGTH = struct.Struct("<I")
HEADER_SIZE: Final = _HEADER.size


class _Lexical(msgspec.Struct, array_like=True, frozen=True):
    tokens: list[str]
    #: int32 per token: how many documents its bucket holds.
    sizes: bytes
    #: int32: record positions, bucket after bucket, ascending within each (a view of the
    #: inflated section: decoding copies nothing).
    ids: memoryview
    #: uint32: term frequencies, aligned with ``ids``.
    tfs: memoryview
    #: int32 per record: its token count, -1 when the index does not hold it (archived).
    lengths: bytes
    doc_count: int
    total_length: int


class _Head(msgspec.Struct, array_like=True, frozen=True):
    """The body's first section: what the sections after it hold."""

    sha: str
    record_count: int
    record_sections: int
    skipped: list[SkippedFile]


class _Body(msgspec.Struct, array_like=True, frozen=True):
    sha: str
    records: list[MemoryRecord]
    skipped: list[SkippedFile]
    lexical: _Lexical


_ENCODER: Final = msgspec.msgpack.Encoder()
_HEAD_DECODER: Final = msgspec.msgpack.Decoder(_Head)
_RECORDS_DECODER: Final = msgspec.msgpack.Decoder(list[MemoryRecord])
_LEXICAL_DECODER: Final = msgspec.msgpack.Decoder(_Lexical)

#: Modules whose code decides what a record or a lexical bucket holds.
_STAMPED_PACKAGES: Final = ("memfile",)
_STAMPED_FILES: Final = ("record.py", "head/lexical.py", "head/indexes.py", "head/snapshot.py")


#: Every struct a snapshot body carries.
SNAPSHOT_STRUCTS: Final[tuple[type[msgspec.Struct], ...]] = (
    MemoryRecord,
    Link,
    Facet,
    Citation,
    EntityRow,
    SkippedFile,
)


def schema_fingerprint(structs: tuple[type[msgspec.Struct], ...] = SNAPSHOT_STRUCTS) -> bytes:
    """The record structs' fields (names, types, defaults) and the stop words, hashed."""
    parts: list[str] = [f"format={FORMAT_VERSION}"]
    for struct_type in structs:
        info = msgspec.inspect.type_info(struct_type)
        assert isinstance(info, msgspec.inspect.StructType)
        fields = [f"{f.name}:{f.type!r}:{f.default!r}" for f in info.fields]
        parts.append(f"{struct_type.__name__}[{info.array_like}]({','.join(fields)})")
    parts.append(" ".join(sorted(STOP_WORDS)))
    return hashlib.sha256("\n".join(parts).encode()).digest()


@functools.cache
def code_stamp() -> bytes:
    """A hash of the sources of the parser, the record and the indexers (read once).

    A snapshot records the code that produced it; any edit to that code makes old snapshots
    unusable, which costs one git load after an upgrade and never a record parsed by old rules.
    """
    return stamp_of_sources(Path(__file__).resolve().parents[1])


def stamp_of_sources(root: Path) -> bytes:
    """The code stamp of the ``headd`` package rooted at ``root``."""
    digest = hashlib.sha256()
    files = [root / name for name in _STAMPED_FILES]
    for package in _STAMPED_PACKAGES:
        files.extend(sorted((root / package).glob("*.py")))
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def guard_of(stamp: bytes) -> bytes:
    """The 32 bytes a snapshot must carry to be decoded by this code."""
    return hashlib.sha256(schema_fingerprint() + stamp).digest()


def encode_version(version: HeadVersion, *, stamp: bytes | None = None) -> bytes:
    """``version`` as snapshot bytes (records, skipped files, lexical index)."""
    indexes = version.indexes
    records = sorted(indexes.records.values(), key=lambda r: PATH_IDS.intern(r.path))
    # int32 positions, so that mapping the 10^6-10^7 document numbers makes no int64 copy.
    position = np.full(len(PATH_IDS), -1, dtype="<i4")
    ident_of = np.fromiter(
        (PATH_IDS.intern(r.path) for r in records), dtype=np.int64, count=len(records)
    )
    if len(PATH_IDS) > position.shape[0]:  # interned concurrently: widen
        position = np.full(len(PATH_IDS), -1, dtype="<i4")
    position[ident_of] = np.arange(len(records), dtype="<i4")
    lexical = indexes.lexical
    tokens = list(lexical.postings.keys())
    buckets = [lexical.postings[token] for token in tokens]
    sizes = np.fromiter((len(b) for b in buckets), dtype=np.int32, count=len(buckets))
    if buckets:
        ids = position[np.concatenate([b.ids for b in buckets])]
        tfs = np.concatenate([b.tfs for b in buckets]).astype("<u4")
    else:
        ids = np.zeros(0, dtype="<i4")
        tfs = np.zeros(0, dtype="<u4")
    del position
    if ids.size and int(ids.min()) < 0:
        raise StorageFailure("lexical index names a path the version does not hold")
    lengths = np.full(len(records), -1, dtype=np.int32)
    every_length = lexical.lengths
    held = ident_of < every_length.shape[0]
    lengths[held] = every_length[ident_of[held]].astype(np.int32)
    lexical_part = _Lexical(
        tokens=tokens,
        sizes=sizes.astype("<i4").tobytes(),
        ids=ids.data.cast("B"),
        tfs=tfs.data.cast("B"),
        lengths=lengths.astype("<i4").tobytes(),
        doc_count=lexical.doc_count,
        total_length=lexical.total_length,
    )
    sections = _sections(version.sha, records, list(version.skipped), lexical_part)
    crc = 0
    for part in sections:
        crc = zlib.crc32(part, crc)
    guard = guard_of(code_stamp() if stamp is None else stamp)
    return b"".join([_HEADER.pack(MAGIC, FORMAT_VERSION, guard, crc), *sections])


#: Records per section of the body: the unit the decode inflates on one thread while it decodes
#: the section before on another, and so a bound on the inflated bytes alive at once (a few MB).
RECORDS_PER_SECTION: Final = 2048


def _sections(
    sha: str, records: list[MemoryRecord], skipped: list[SkippedFile], lexical: _Lexical
) -> list[bytes]:
    """The body's parts in order: each section a u32 length and a zstd frame of msgpack.

    The head section says how many records and record sections follow, so the whole
    uncompressed body (five times the compressed one) never exists in memory at once, on either
    side.
    """
    pieces = [
        records[a : a + RECORDS_PER_SECTION] for a in range(0, len(records), RECORDS_PER_SECTION)
    ]
    out: list[bytes] = []
    head = [_Head(sha, len(records), len(pieces), skipped)]
    for item in itertools.chain(head, pieces, [lexical]):
        frame = zstd.compress(_ENCODER.encode(item), level=COMPRESS_LEVEL)
        out.append(_SECTION_LENGTH.pack(len(frame)))
        out.append(frame)
    return out


def _split_sections(body: memoryview) -> list[memoryview]:
    """The body's sections (their zstd frames, unread); StorageFailure when the lengths do not
    tile the body exactly."""
    frames: list[memoryview] = []
    offset, end = 0, len(body)
    size = _SECTION_LENGTH.size
    while offset < end:
        if offset + size > end:
            raise StorageFailure("snapshot sections do not fit the body")
        (length,) = _SECTION_LENGTH.unpack_from(body, offset)
        offset += size
        if length == 0 or offset + length > end:
            raise StorageFailure("snapshot sections do not fit the body")
        frames.append(body[offset : offset + length])
        offset += length
    if len(frames) < 2:
        raise StorageFailure("snapshot body too short")
    return frames


#: Sections inflated ahead of the one being decoded.
_INFLATE_AHEAD: Final = 2


def _inflated(frames: list[memoryview]) -> Generator[bytes, None, None]:
    """Each frame inflated, in order; the next ones inflate on a thread while the caller decodes
    this one (zstd releases the GIL while it inflates), so inflating costs the decode little
    wall time on a second core, and at most ``_INFLATE_AHEAD`` + 1 sections are inflated at once."""
    if len(frames) <= 2:
        for frame in frames:
            yield zstd.decompress(frame)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="headd-snapshot-inflate") as pool:
        ahead = deque(pool.submit(zstd.decompress, frame) for frame in frames[:_INFLATE_AHEAD])
        following = _INFLATE_AHEAD
        try:
            while ahead:
                raw = ahead.popleft().result()
                if following < len(frames):
                    ahead.append(pool.submit(zstd.decompress, frames[following]))
                    following += 1
                yield raw
        finally:
            for future in ahead:
                future.cancel()


def _decode_sections(frames: list[memoryview]) -> _Body:
    """The body of the sections ``frames``: records decoded section by section as they inflate."""
    inflated = _inflated(frames)
    try:
        head = _HEAD_DECODER.decode(next(inflated))
        if head.record_sections != len(frames) - 2:
            raise StorageFailure("snapshot sections do not match the head")
        records: list[MemoryRecord] = []
        for _ in range(head.record_sections):
            records.extend(_RECORDS_DECODER.decode(next(inflated)))
        if len(records) != head.record_count:
            raise StorageFailure("snapshot holds another number of records")
        lexical = _LEXICAL_DECODER.decode(next(inflated))
    finally:
        inflated.close()  # waits for the inflate in flight, if any
        for frame in frames:  # so that a mapped file can be closed as soon as this returns
            frame.release()
    return _Body(head.sha, records, head.skipped, lexical)


def decode_body(data: bytes | memoryview) -> _Body:
    """The body of a snapshot as it is stored, unchecked (tests read its records with it)."""
    with memoryview(data) as whole, whole[HEADER_SIZE:] as view:
        return _decode_sections(_split_sections(view))


def read_header(data: bytes | memoryview) -> tuple[int, bytes, int]:
    """``(format, guard, crc)`` of a snapshot; StorageFailure when it is not one."""
    if len(data) < HEADER_SIZE:
        raise StorageFailure("snapshot too short", {"bytes": len(data)})
    magic, fmt, guard, crc = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise StorageFailure("not a head snapshot")
    return int(fmt), bytes(guard), int(crc)


def check_compatible(data: bytes | memoryview, *, stamp: bytes | None = None) -> None:
    """IndexStale when the snapshot was written by another format or other code."""
    fmt, guard, _crc = read_header(data)
    if fmt != FORMAT_VERSION:
        raise IndexStale("snapshot format differs", {"format": fmt, "expected": FORMAT_VERSION})
    if guard != guard_of(code_stamp() if stamp is None else stamp):
        raise IndexStale("snapshot written by other code (record schema or parser changed)")


def decode_version(
    data: bytes | memoryview, *, expected_sha: str | None = None, stamp: bytes | None = None
) -> HeadVersion:
    """The version a snapshot holds, equal (``Indexes`` equality) to the one it was made from.

    IndexStale: another format or other code wrote it. StorageFailure: damaged bytes, or not the
    commit ``expected_sha`` names.
    """
    check_compatible(data, stamp=stamp)
    _fmt, _guard, crc = read_header(data)
    with collector_paused():
        # Both views are released on the way out, even by an exception, so that a caller's
        # memory-mapped ``data`` can be closed as soon as this returns (the checksum thread is
        # joined before they are).
        with memoryview(data) as whole, whole[HEADER_SIZE:] as view:
            checksum = _Crc32(view)
            try:
                body: _Body | None = _decode_sections(_split_sections(view))
                failure = None
            except (msgspec.DecodeError, msgspec.ValidationError, zstd.ZstdError) as exc:
                body, failure = None, str(exc)
            except StorageFailure as exc:
                body, failure = None, exc.message
            finally:
                matches = checksum.value() == crc
            if not matches:
                raise StorageFailure("snapshot checksum mismatch")
            if body is None:
                raise StorageFailure("snapshot body does not decode", {"error": failure})
        if expected_sha is not None and body.sha != expected_sha:
            raise StorageFailure("snapshot is of another commit", {"sha": body.sha})
        try:
            indexes = assemble(body.records, body.lexical)
        except (ValueError, IndexError) as exc:
            raise StorageFailure("snapshot arrays are inconsistent", {"error": str(exc)}) from None
    return HeadVersion(indexes, body.sha, None, tuple(body.skipped))


#: Bodies at least this long are checksummed on a thread of their own while they decode.
PARALLEL_CRC_BYTES: Final = 1 << 20


class _Crc32:
    """``zlib.crc32`` of a buffer, computed on a thread beside the msgpack decode when it is large.

    zlib releases the GIL while it checksums a large buffer, so on a second core the checksum of
    a large body overlaps the decode instead of preceding it.
    ``value`` joins the thread: call it before the buffer is released.
    """

    __slots__ = ("_buffer", "_thread", "_value")

    def __init__(self, buffer: memoryview) -> None:
        self._buffer: memoryview | None = buffer
        self._value: int | None = None
        self._thread: threading.Thread | None = None
        if len(buffer) >= PARALLEL_CRC_BYTES:
            self._thread = threading.Thread(target=self._run, name="headd-snapshot-crc")
            self._thread.start()

    def _run(self) -> None:
        assert self._buffer is not None
        self._value = zlib.crc32(self._buffer)

    def value(self) -> int:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        elif self._value is None:
            self._run()
        self._buffer = None
        assert self._value is not None
        return self._value


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


#: ``PMap``'s own storage (slots), reached past the properties of :class:`PendingMap`.
_BUCKETS_SLOT: Final[Any] = vars(PMap)["_buckets"]
_SIZE_SLOT: Final[Any] = vars(PMap)["_size"]


class PendingMap(PMap[Any, Any]):
    """A ``PMap`` built at first use, by the ``pmap(dict)`` a decode would have run at once.

    At 10,000 records a snapshot holds ~55,000 lexical buckets; making a ``Postings`` of each
    and hashing it into a map was a third of a decode's CPU, and the multi-maps (content hash,
    frame key, inbound, entity) another sixth; hashing the records into their map costs ~10%
    more. Nothing before the first search, resolve or advance needs them, and ``len`` of a map
    made with its ``size`` needs no build (the daemon builds them right after READY, see
    :func:`settle_version`).
    Any read (``len``, ``get``, iteration, equality, an evolver) builds the map once, under a
    lock, and from then on this is an ordinary ``PMap`` with the buckets ``pmap`` makes.

    This reaches into ``PMap``'s private slots (``_buckets``, ``_size``): a pyrsistent that
    renames them fails this module's import (``vars(PMap)[...]``), and one that reads its storage
    another way fails ``tests/test_head_snapshot.py::
    test_a_pending_map_reads_and_evolves_like_a_pmap_before_it_is_built`` (every read, update,
    evolver and hash of a pending map against ``pmap``'s own) and the concurrent-build test
    after it.
    """

    __slots__ = ("_build", "_lock")

    _build: Callable[[], dict[Any, Any]] | None
    _lock: threading.Lock

    def __new__(cls, build: Callable[[], dict[Any, Any]], size: int | None = None) -> PendingMap:
        self: PendingMap = super().__new__(cls, size, None)  # type: ignore[call-arg]
        self._build = build
        self._lock = threading.Lock()
        return self

    @property
    def _buckets(self) -> Any:
        buckets = _BUCKETS_SLOT.__get__(self, PMap)
        return self._materialize() if buckets is None else buckets

    @_buckets.setter
    def _buckets(self, buckets: Any) -> None:
        _BUCKETS_SLOT.__set__(self, buckets)

    @property
    def _size(self) -> int:
        size: int | None = _SIZE_SLOT.__get__(self, PMap)
        if size is None:
            self._materialize()
            size = _SIZE_SLOT.__get__(self, PMap)
        assert size is not None
        return size

    @_size.setter
    def _size(self, size: int | None) -> None:
        _SIZE_SLOT.__set__(self, size)

    @property
    def pending(self) -> bool:
        """Whether the map is still to be built."""
        return _BUCKETS_SLOT.__get__(self, PMap) is None

    def _materialize(self) -> Any:
        with self._lock:
            buckets = _BUCKETS_SLOT.__get__(self, PMap)
            if buckets is None:
                assert self._build is not None
                built = pmap(self._build())
                buckets = _BUCKETS_SLOT.__get__(built, PMap)
                _SIZE_SLOT.__set__(self, _SIZE_SLOT.__get__(built, PMap))
                _BUCKETS_SLOT.__set__(self, buckets)
                self._build = None
            return buckets


def _pending_maps(indexes: Indexes) -> list[PendingMap]:
    maps = (
        indexes.records,
        indexes.lexical.postings,
        indexes.by_content_hash,
        indexes.content_paths,
        indexes.by_frame_key,
        indexes.inbound,
        indexes.by_entity,
    )
    return [m for m in maps if isinstance(m, PendingMap) and m.pending]


def settle_version(version: HeadVersion) -> bool:
    """Build whatever a decode left pending (multi-maps, lexical buckets and lengths); whether
    there was. What a search reads comes first (the records, the buckets, the lengths), so that
    a search arriving during the settle does not wait for the multi-maps it never reads."""
    indexes = version.indexes
    lexical = indexes.lexical
    searched = [m for m in (indexes.records, lexical.postings) if isinstance(m, PendingMap)]
    built = False
    for lazy in searched:
        built = lazy.pending or built
        lazy.get("")
    if "length_chunks" not in vars(lexical):
        built = True
        lexical.length_chunks  # noqa: B018 -- the read builds them
    rest = _pending_maps(indexes)
    for lazy in rest:
        lazy.get("")
    return built or bool(rest)


def _int32s(data: bytes) -> memoryview:
    """The little-endian int32 array ``data`` as a sequence of ints, without numpy or a copy."""
    if len(data) % 4:
        raise ValueError("an int32 array of a length not a multiple of 4")
    if sys.byteorder != "little":  # no such machine runs the daemon; correct, only slower
        swapped = bytearray(data)
        for start in range(4):
            swapped[start::4] = data[3 - start :: 4]
        return memoryview(bytes(swapped)).cast("i")
    return memoryview(data).cast("i")


def _lexical_from(lex: _Lexical, idents: list[int]) -> LexicalIndex:
    """The lexical index of the persisted arrays: checked now, its buckets and lengths built at
    first use.

    Only what a decode must refuse a damaged snapshot on is computed here, in plain Python on the
    persisted int32 arrays so that READY needs no numpy (sizes, bounds, unique tokens); the
    range of the 10^6 document numbers is checked where they are widened, mapped to this
    process's ids and sliced into buckets, by the :class:`PendingMap` (the same arrays, one step
    later), and the lengths array is made at its first read.
    """
    count = len(idents)
    sizes_local = _int32s(lex.sizes)
    if (
        len(sizes_local) != len(lex.tokens)
        or sum(sizes_local) != len(lex.ids) // 4
        or len(lex.ids) != len(lex.tfs)
        or len(lex.lengths) != 4 * count
        or len(set(lex.tokens)) != len(lex.tokens)
        or len(lex.ids) % 4
        or len(lex.lengths) % 4
        or (count == 0 and lex.ids)
    ):
        raise ValueError("lexical arrays do not fit together")
    tokens = lex.tokens

    def build() -> dict[str, Postings]:
        sizes = np.frombuffer(lex.sizes, dtype="<i4").astype(np.int64)
        ids_local = np.frombuffer(lex.ids, dtype="<i4")
        if ids_local.size and (int(ids_local.min()) < 0 or int(ids_local.max()) >= count):
            raise StorageFailure("snapshot arrays are inconsistent", {"error": "document ids"})
        held = np.array(idents, dtype=POSTING_ID)
        ids = held[ids_local] if count else ids_local.astype(POSTING_ID)
        tfs = np.frombuffer(lex.tfs, dtype="<u4").astype(POSTING_TF)
        ends = np.cumsum(sizes)
        starts = ends - sizes
        if count > 1 and not bool(np.all(held[1:] > held[:-1])):
            # This process numbered the paths in another order: sort each bucket by its new ids.
            codes = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
            order = np.lexsort((ids, codes))
            ids, tfs = ids[order], tfs[order]
        frozen_ids = _frozen(np.ascontiguousarray(ids))
        frozen_tfs = _frozen(np.ascontiguousarray(tfs))
        buckets = Postings.views(frozen_ids, frozen_tfs, starts.tolist(), ends.tolist())
        return dict(zip(tokens, buckets, strict=True))

    size = max(len(PATH_IDS), max(idents) + 1 if count else 0)

    def lengths() -> np.ndarray:
        built = np.full(size, -1.0, dtype=np.float64)
        if count:
            local = np.frombuffer(lex.lengths, dtype="<i4")
            built[np.array(idents, dtype=np.int64)] = local.astype(np.float64)
        return built

    return LexicalIndex.with_pending_lengths(
        PendingMap(build, len(tokens)), lengths, lex.doc_count, lex.total_length
    )


def _tree_order(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _frozen_multi(work: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {key: multi_bucket(paths) for key, paths in work.items()}


class _MultiMaps:
    """The multi-maps of a list of records, built together by one loop when first asked for.

    They follow ``IndexesBuilder.insert`` for a fresh load: content hash and frame key over
    active records, inbound links and entities over all, and each content hash held by the
    first of its active paths in git tree order.
    """

    def __init__(self, records: list[MemoryRecord]) -> None:
        self._records: list[MemoryRecord] | None = records
        self._built: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def pending(self, name: str) -> PendingMap:
        return PendingMap(lambda: self._maps()[name])

    def _maps(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._built is None:
                assert self._records is not None
                self._built = _multi_maps(self._records)
                self._records = None
            return self._built


def _multi_maps(records: list[MemoryRecord]) -> dict[str, dict[str, Any]]:
    content: dict[str, list[str]] = {}
    frame: dict[str, list[str]] = {}
    inbound: dict[str, list[str]] = {}
    entity: dict[str, list[str]] = {}
    for record in records:
        path = record.path
        if not record.archived:
            if record.frame_key is not None:
                frame.setdefault(record.frame_key, []).append(path)
            content.setdefault(record.content_hash, []).append(path)
        for link in record.links:
            inbound.setdefault(link.href, []).append(path)
        for name in record.entities:
            entity.setdefault(name, []).append(path)
    holders = {
        key: paths[0] if len(paths) == 1 else min(paths, key=_tree_order)
        for key, paths in content.items()
    }
    return {
        "by_content_hash": holders,
        "content_paths": _frozen_multi(content),
        "by_frame_key": _frozen_multi(frame),
        "inbound": _frozen_multi(inbound),
        "by_entity": _frozen_multi(entity),
    }


def assemble(records: Iterable[MemoryRecord], lexical: _Lexical) -> Indexes:
    """``Indexes`` from decoded records and the persisted lexical arrays, with no tokenizing.

    The records map is built here; the multi-maps (:class:`_MultiMaps`) and the lexical buckets
    are :class:`PendingMap` values, built at first use.
    """
    records = list(records)
    by_path = {record.path: record for record in records}
    if len(by_path) != len(records):
        raise ValueError("two records share a path")
    idents = PATH_IDS.intern_many(by_path)
    multi = _MultiMaps(records)
    return Indexes(
        records=PendingMap(lambda: by_path, len(by_path)),
        by_content_hash=multi.pending("by_content_hash"),
        content_paths=multi.pending("content_paths"),
        by_frame_key=multi.pending("by_frame_key"),
        inbound=multi.pending("inbound"),
        by_entity=multi.pending("by_entity"),
        lexical=_lexical_from(lexical, idents),
    )
