"""The lexical arm's index: per-token postings with term frequencies, and per-document lengths.

Shape, and why. memhtml keeps ``token -> path -> tf`` as nested persistent maps. Built with
pyrsistent, that shape alone would cost a load at 10,000 documents its 3 s and a query its 2 ms
(docs/design/head.md). What the head's tests
need is sharing by identity at the level of a *token bucket*: a version built from its parent
shares every bucket the change did not touch. So the token map is a persistent ``PMap`` (shared
node for node), and each bucket is an immutable :class:`Postings`, two read-only numpy arrays
(document ids ascending, term frequencies), replaced whole when a document in it changes. BM25
then scores a bucket in one vectorized step.

Document lengths are one read-only float array indexed by document id (``-1`` for a document the
index does not hold). A new version copies it once per batch of changes (eight bytes a path),
which costs less than a persistent map and keeps the length lookup vectorized.

Ids come from :data:`headd.head.ids.PATH_IDS`, so they are stable across versions.

Only active records are indexed; the caller (``indexes.py``) decides which those are.

Tokenizing (``tokenize``, ``STOP_WORDS``, ``indexed_text``) lives in ``tokens.py``, which a load's
parse workers import without numpy; it is re-exported here.

Importing this module does not import numpy (:mod:`headd.lazy_import`): a daemon starting from a
snapshot reaches READY without it, with the decoded index's lengths built at first use
(:meth:`LexicalIndex.with_pending_lengths`) and its buckets left to a pending map.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
import weakref
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from pyrsistent import PMap, pmap

from headd.head.ids import PATH_IDS
from headd.head.tokens import STOP_WORDS as STOP_WORDS
from headd.head.tokens import code_token_lists
from headd.head.tokens import indexed_text as indexed_text
from headd.head.tokens import tokenize as tokenize
from headd.lazy_import import LazyModule
from headd.record import MemoryRecord

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", globals(), "np")

IdArray: TypeAlias = "NDArray[np.int64]"
FloatArray: TypeAlias = "NDArray[np.float64]"


def term_frequencies(record: MemoryRecord) -> dict[str, int]:
    """Token -> count over the record's indexed text, in first-occurrence order."""
    return dict(Counter(tokenize(indexed_text(record))))


#: A run of documents' tokens: the run's vocabulary (first-occurrence order), every token as
#: its position in it (document after document), and each document's token count.
CodedTokens: TypeAlias = tuple[list[str], "NDArray[np.int32]", list[int]]


def code_tokens(documents: Iterable[list[str]]) -> CodedTokens:
    """Tokens of several documents as one :data:`CodedTokens` (see ``LexicalBuilder.add_coded``)."""
    names, codes, sizes = code_token_lists(documents)
    return names, np.frombuffer(codes, dtype=np.int32), sizes


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@functools.cache
def _no_ids() -> IdArray:
    return _frozen(np.zeros(0, dtype=np.int64))


@functools.cache
def _no_tfs() -> FloatArray:
    return _frozen(np.zeros(0, dtype=np.float64))


#: A bucket's element types: path ids fit 32 bits, and a term frequency is a small integer that
#: float32 holds exactly (scoring widens it to float64 first, so every score is the same float).
#: (Names, not numpy's types: importing this module does not import numpy.)
POSTING_ID: Final = "int32"
POSTING_TF: Final = "float32"


class Postings:
    """One token's bucket: document ids ascending and their term frequencies. Immutable.

    A bucket is a range ``start:stop`` of two read-only arrays, usually the flat arrays every
    bucket of a load or a decode shares, and ``ids``/``tfs`` are views made when read: ~55,000
    buckets at 10,000 documents held two numpy views each (~300 bytes a bucket), where a range
    costs two integers.
    """

    __slots__ = ("_flat_ids", "_flat_tfs", "_start", "_stop")

    _flat_ids: np.ndarray
    _flat_tfs: np.ndarray
    _start: int
    _stop: int

    def __init__(self, ids: np.ndarray, tfs: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=POSTING_ID)
        tfs = np.asarray(tfs, dtype=POSTING_TF)
        if ids.shape != tfs.shape:
            raise ValueError("a bucket's ids and term frequencies differ in length")
        self._flat_ids = ids if not ids.flags.writeable else _frozen(ids)
        self._flat_tfs = tfs if not tfs.flags.writeable else _frozen(tfs)
        self._start = 0
        self._stop = int(ids.shape[0])

    @property
    def ids(self) -> np.ndarray:
        return self._flat_ids[self._start : self._stop]

    @property
    def tfs(self) -> np.ndarray:
        return self._flat_tfs[self._start : self._stop]

    @classmethod
    def views(
        cls, ids: np.ndarray, tfs: np.ndarray, starts: list[int], ends: list[int]
    ) -> list[Postings]:
        """One bucket per ``starts[i]:ends[i]`` of ``ids`` and ``tfs`` (of the bucket element
        types), each a view the caller has made read-only. A load makes tens of thousands of
        buckets, so ``__init__``'s per-array checks are skipped: they would be most of this step."""
        if ids.flags.writeable or tfs.flags.writeable:
            raise ValueError("bucket views need read-only arrays")
        if ids.dtype != POSTING_ID or tfs.dtype != POSTING_TF:
            raise ValueError("bucket arrays of another element type")
        make = object.__new__
        buckets: list[Postings] = []
        append = buckets.append
        for start, end in zip(starts, ends, strict=True):
            bucket = make(cls)
            bucket._flat_ids = ids
            bucket._flat_tfs = tfs
            bucket._start = start
            bucket._stop = end
            append(bucket)
        return buckets

    def __len__(self) -> int:
        return self._stop - self._start

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Postings):
            return NotImplemented
        return bool(np.array_equal(self.ids, other.ids) and np.array_equal(self.tfs, other.tfs))

    def __hash__(self) -> int:
        return hash((self.ids.tobytes(), self.tfs.tobytes()))

    def __repr__(self) -> str:
        return f"Postings({len(self)} documents)"


#: Ids per chunk of the document lengths (8 KB of float64): an advance copies the chunks its
#: documents fall in and shares every other with its parent.
LENGTH_CHUNK: Final = 1024


def _chunked(lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """A flat, read-only lengths array as :data:`LENGTH_CHUNK`-id views of it (the last may be
    shorter)."""
    return tuple(
        lengths[start : start + LENGTH_CHUNK] for start in range(0, lengths.shape[0], LENGTH_CHUNK)
    )


@dataclass(frozen=True, eq=False)
class LexicalIndex:
    """The persistent lexical index of one version (active records only)."""

    postings: PMap[str, Postings] = field(default_factory=pmap)
    #: Token count of each document by id, ``-1`` where the index holds no document, in chunks
    #: of :data:`LENGTH_CHUNK` ids (read-only; every chunk but the last is full). A version made
    #: by an advance shares its parent's chunks but the ones it changed: a whole array per
    #: version would be most of what a retained version costs.
    length_chunks: tuple[FloatArray, ...] = field(default_factory=tuple)
    #: How many documents the index holds: BM25's N.
    doc_count: int = 0
    #: Sum of every length, so the average length is O(1) at query time.
    total_length: int = 0

    @property
    def lengths(self) -> FloatArray:
        """Every length as one array indexed by document id (joined when read: callers that
        read it per query keep it, as :class:`_LengthNorms` does)."""
        chunks = self.length_chunks
        if not chunks:
            return _no_tfs()
        if len(chunks) == 1:
            return chunks[0]
        return _frozen(np.concatenate(chunks))

    @property
    def capacity(self) -> int:
        """The length of :attr:`lengths`: one past the highest id the index can hold."""
        chunks = self.length_chunks
        return (len(chunks) - 1) * LENGTH_CHUNK + int(chunks[-1].shape[0]) if chunks else 0

    def length_of(self, ident: int) -> float | None:
        chunks = self.length_chunks
        index = ident // LENGTH_CHUNK
        if index >= len(chunks) or ident % LENGTH_CHUNK >= chunks[index].shape[0]:
            return None
        value = float(chunks[index][ident % LENGTH_CHUNK])
        return None if value < 0 else value

    def document_lengths(self) -> dict[str, int]:
        """Path -> length for every document held (tests and debugging)."""
        lengths = self.lengths
        held = np.flatnonzero(lengths >= 0)
        return {PATH_IDS.path(int(i)): int(lengths[i]) for i in held}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LexicalIndex):
            return NotImplemented
        return (
            self.doc_count == other.doc_count
            and self.total_length == other.total_length
            and self.postings == other.postings
            and self.document_lengths() == other.document_lengths()
        )

    __hash__ = None  # type: ignore[assignment]

    @staticmethod
    def with_pending_lengths(
        postings: PMap[str, Postings],
        build_lengths: Callable[[], FloatArray],
        doc_count: int,
        total_length: int,
    ) -> LexicalIndex:
        """An index whose lengths are built by ``build_lengths`` when first read.

        A snapshot decode returns one, so that READY (within 0.5 s at 10,000 memories) needs
        neither the lengths array nor numpy; the index is otherwise the one ``LexicalIndex(...)`` would make.
        """
        index = object.__new__(_LengthsAtFirstUse)
        set_field = object.__setattr__
        set_field(index, "postings", postings)
        set_field(index, "doc_count", doc_count)
        set_field(index, "total_length", total_length)
        set_field(index, "_build_lengths", build_lengths)
        return index


#: One lock for every first build of pending lengths: they are rare (one per decode).
_LENGTHS_LOCK: Final = threading.Lock()


class _LengthsAtFirstUse(LexicalIndex):
    """A :class:`LexicalIndex` whose ``length_chunks`` field is filled on its first read (the
    field is absent from the instance until then, so the read falls through to
    ``__getattr__``)."""

    def __getattr__(self, name: str) -> Any:
        if name != "length_chunks":
            raise AttributeError(name)
        with _LENGTHS_LOCK:
            state = self.__dict__
            chunks = state.get("length_chunks")
            if chunks is None:
                chunks = _chunked(_frozen(state["_build_lengths"]()))
                object.__setattr__(self, "length_chunks", chunks)
                del state["_build_lengths"]
        return chunks


EMPTY_LEXICAL: Final = LexicalIndex.with_pending_lengths(pmap(), _no_tfs, 0, 0)


class LexicalBuilder:
    """A transient over one :class:`LexicalIndex`: many edits, then one :meth:`freeze`.

    Edits are recorded per token (ids set with their tf, ids dropped; a set wins) and applied
    once per touched bucket at freeze time, so a bulk load and a many-file advance cost one array
    build per bucket rather than one per edit. A bucket whose final content equals its original
    keeps the original object, which is what keeps buckets shared across an edit that does not
    change them.
    """

    def __init__(self, base: LexicalIndex = EMPTY_LEXICAL) -> None:
        self._base = base
        self._sets: defaultdict[str, dict[int, int]] = defaultdict(dict)
        self._drops: dict[str, set[int]] = {}
        self._length_changes: dict[int, int | None] = {}
        self._doc_count = base.doc_count
        self._total_length = base.total_length
        # Bulk mode (a fresh index being filled with adds only, as a load does): documents are
        # appended as flat runs and inverted with one sort at freeze. The first remove or
        # replace moves them into the per-token form above.
        self._bulk = not base.postings and base.doc_count == 0
        #: Bulk mode keeps every document's tokens (repeats included) as one flat run of token
        #: codes per document; counting them is left to the one sort at freeze (``_invert``).
        #: A token's code is drawn from ``_next_code`` when first seen, so codes ascend in the
        #: vocabulary's insertion order (they need not be dense).
        self._bulk_ids: list[int] = []
        self._bulk_sizes: list[int] = []
        self._bulk_codes = array("q")
        self._vocabulary: dict[str, int] = {}
        self._next_code = itertools.count()

    def _leave_bulk(self) -> None:
        if not self._bulk:
            return
        self._bulk = False
        name_of = {code: token for token, code in self._vocabulary.items()}
        codes = self._bulk_codes
        sets = self._sets
        start = 0
        for ident, size in zip(self._bulk_ids, self._bulk_sizes, strict=True):
            for code, count in Counter(codes[start : start + size]).items():
                sets[name_of[code]][ident] = count
            start += size
        self._bulk_ids, self._bulk_sizes, self._bulk_codes = [], [], array("q")
        self._vocabulary = {}

    @property
    def bulk(self) -> bool:
        """Whether the builder is still filling a fresh index with adds only."""
        return self._bulk

    def _current_length(self, ident: int) -> int | None:
        if ident in self._length_changes:
            return self._length_changes[ident]
        value = self._base.length_of(ident)
        return None if value is None else int(value)

    def holds(self, ident: int) -> bool:
        return self._current_length(ident) is not None

    def add(self, ident: int, frequencies: dict[str, int]) -> None:
        """Index one document. The caller has removed any earlier document with this id."""
        if self._bulk:
            self.add_tokens(ident, [t for t, n in frequencies.items() for _ in range(n)])
            return
        sets = self._sets
        for token, count in frequencies.items():
            sets[token][ident] = count
        self._count_in(ident, sum(frequencies.values()))

    def add_tokens(self, ident: int, tokens: list[str]) -> None:
        """Index one document given its tokens (``tokenize`` of its text, repeats included).

        The same as ``add(ident, Counter(tokens))``; a bulk load keeps the tokens as they are,
        so no per-document counting happens in Python.
        """
        if self._bulk:
            self._bulk_ids.append(ident)
            self._bulk_sizes.append(len(tokens))
            self._bulk_codes.extend(map(self._vocabulary.setdefault, tokens, self._next_code))
            self._count_in(ident, len(tokens))
        else:
            self.add(ident, dict(Counter(tokens)))

    def add_coded(self, idents: list[int], run: CodedTokens) -> None:
        """Index several documents, in order, whose tokens arrive coded against the run's own
        vocabulary (:func:`code_tokens`, computed where the documents were parsed).

        The same as ``add_tokens`` for each document in turn; a bulk load maps the run's
        vocabulary once instead of every token.
        """
        names, codes, sizes = run
        if len(idents) != len(sizes):
            raise ValueError("a coded run names another number of documents")
        if not self._bulk:
            bounds = np.cumsum([0, *sizes]).tolist()
            for ident, a, b in zip(idents, bounds, bounds[1:], strict=False):
                self.add_tokens(ident, [names[c] for c in codes[a:b].tolist()])
            return
        mapping = np.fromiter(
            map(self._vocabulary.setdefault, names, self._next_code),
            dtype=np.int64,
            count=len(names),
        )
        self._bulk_codes.frombytes(mapping[codes].tobytes())
        self._bulk_ids.extend(idents)
        self._bulk_sizes.extend(sizes)
        for ident, size in zip(idents, sizes, strict=True):
            self._count_in(ident, size)

    def _count_in(self, ident: int, length: int) -> None:
        self._length_changes[ident] = length
        self._doc_count += 1
        self._total_length += length

    def remove(self, ident: int, frequencies: dict[str, int]) -> None:
        """Drop one document, given the frequencies it was indexed with. Absent: a no-op."""
        self._leave_bulk()
        length = self._current_length(ident)
        if length is None:
            return
        sets, drops = self._sets, self._drops
        for token in frequencies:
            bucket = sets.get(token)
            if bucket is not None:
                bucket.pop(ident, None)
            dropped = drops.get(token)
            if dropped is None:
                drops[token] = {ident}
            else:
                dropped.add(ident)
        self._length_changes[ident] = None
        self._doc_count -= 1
        self._total_length -= length

    def replace(self, ident: int, old: dict[str, int], new: dict[str, int]) -> None:
        """Re-index a held document from ``old`` to ``new`` frequencies, touching only the
        buckets whose entry for it changes."""
        self._leave_bulk()
        length = self._current_length(ident)
        if length is None:
            self.add(ident, new)
            return
        sets, drops = self._sets, self._drops
        for token in old:
            if token not in new:
                bucket = sets.get(token)
                if bucket is not None:
                    bucket.pop(ident, None)
                drops.setdefault(token, set()).add(ident)
        for token, count in new.items():
            if old.get(token) != count:
                sets[token][ident] = count
        new_length = sum(new.values())
        self._length_changes[ident] = new_length
        self._total_length += new_length - length

    def freeze(self) -> LexicalIndex:
        base = self._base
        if not self._sets and not self._drops and not self._length_changes:
            return base
        base_postings = base.postings
        touched = self._sets.keys() | self._drops.keys()
        if self._bulk:
            postings = pmap(
                _invert(self._bulk_ids, self._bulk_sizes, self._bulk_codes, self._vocabulary)
            )
        elif not base_postings:
            postings = pmap(_bulk_build(self._sets))
        else:
            evolver = base_postings.evolver()
            for token in touched:
                original = base_postings.get(token)
                built = _apply(original, self._sets.get(token), self._drops.get(token))
                if built is None:
                    if original is not None:
                        evolver.remove(token)
                elif built is not original:
                    evolver.set(token, built)
            postings = evolver.persistent()
        chunks = base.length_chunks
        if self._length_changes:
            chunks = _changed_chunks(chunks, self._length_changes)
        return LexicalIndex(
            postings=postings,
            length_chunks=chunks,
            doc_count=self._doc_count,
            total_length=self._total_length,
        )


def _changed_chunks(
    chunks: tuple[FloatArray, ...], changes: dict[int, int | None]
) -> tuple[FloatArray, ...]:
    """``chunks`` with each changed id's length set (None: -1), copying only the chunks the
    changes fall in (and a short last chunk that must widen); the ids reach at least the
    process's path count, as a whole array's did."""
    size = max(len(PATH_IDS), max(changes) + 1)
    needed = -(-size // LENGTH_CHUNK)
    idents = np.fromiter(changes, dtype=np.int64, count=len(changes))
    values = np.fromiter(
        (-1.0 if v is None else float(v) for v in changes.values()),
        dtype=np.float64,
        count=len(changes),
    )
    order = np.argsort(idents)
    idents, values = idents[order], values[order]
    bounds = np.searchsorted(idents, np.arange(needed + 1, dtype=np.int64) * LENGTH_CHUNK).tolist()
    out = list(chunks)
    touched = {int(i) for i in np.unique(idents // LENGTH_CHUNK)}
    touched.update(range(len(out), needed))
    if out and len(out) < needed and out[-1].shape[0] < LENGTH_CHUNK:
        touched.add(len(out) - 1)  # every chunk but the last is full
    out.extend(_no_tfs() for _ in range(len(out), needed))
    for index in touched:
        original = out[index]
        width = LENGTH_CHUNK if index < needed - 1 else size - index * LENGTH_CHUNK
        chunk = np.full(max(width, int(original.shape[0])), -1.0, dtype=np.float64)
        chunk[: original.shape[0]] = original
        lo, hi = bounds[index], bounds[index + 1]
        chunk[idents[lo:hi] - index * LENGTH_CHUNK] = values[lo:hi]
        out[index] = _frozen(chunk)
    return tuple(out)


def _apply_one(
    original: Postings, sets: dict[int, int] | None, drops: set[int] | None
) -> Postings | None:
    """The common case of an advance: one document's entry set, changed or dropped."""
    ids, tfs = original.ids, original.tfs
    if sets:
        ((ident, count),) = sets.items()
    else:
        assert drops is not None
        (ident,) = drops
        count = None
    position = int(np.searchsorted(ids, ident))
    present = position < ids.shape[0] and int(ids[position]) == ident
    if count is None:
        if not present:
            return original
        if ids.shape[0] == 1:
            return None
        return Postings(_without(ids, position), _without(tfs, position))
    if present:
        if float(tfs[position]) == float(count):
            return original
        new_tfs = tfs.copy()
        new_tfs[position] = float(count)
        return Postings(ids, new_tfs)
    return Postings(_with(ids, position, ident), _with(tfs, position, float(count)))


def _with(values: NDArray[Any], position: int, value: float) -> NDArray[Any]:
    """``np.insert(values, position, value)`` by two slice copies: an advance makes one per
    token of the changed memory, and ``np.insert``'s generality costs ten times the copy."""
    out = np.empty(values.shape[0] + 1, dtype=values.dtype)
    out[:position] = values[:position]
    out[position] = value
    out[position + 1 :] = values[position:]
    return out


def _without(values: NDArray[Any], position: int) -> NDArray[Any]:
    """``np.delete(values, position)`` by two slice copies (see :func:`_with`)."""
    out = np.empty(values.shape[0] - 1, dtype=values.dtype)
    out[:position] = values[:position]
    out[position:] = values[position + 1 :]
    return out


def _invert(
    ids: list[int], sizes: list[int], codes: array[int], vocabulary: dict[str, int]
) -> dict[str, Postings]:
    """Flat runs of token codes per document -> every bucket, with one sort and no Python loop
    over the tokens.

    Each occurrence becomes the key ``code * span + document id``; sorting the keys and counting
    equal runs (``np.unique``) yields the term frequencies grouped by token and ascending by
    document within each. Codes ascend in ``vocabulary``'s order and every token in it occurs,
    so the runs are its buckets in order. Buckets are views into two read-only arrays.
    """
    if not codes:
        return {}
    doc_ids = np.array(ids, dtype=np.int64)
    span = int(doc_ids.max()) + 1
    keys = np.frombuffer(codes, dtype=np.int64) * span + np.repeat(
        doc_ids, np.array(sizes, dtype=np.int64)
    )
    keys, counts = np.unique(keys, return_counts=True)
    token_codes = keys // span
    flat_ids = _frozen((keys - token_codes * span).astype(POSTING_ID))
    flat_tfs = _frozen(counts.astype(POSTING_TF))
    starts = np.flatnonzero(np.r_[True, token_codes[1:] != token_codes[:-1]]).tolist()
    ends = [*starts[1:], int(keys.shape[0])]
    return dict(zip(vocabulary, Postings.views(flat_ids, flat_tfs, starts, ends), strict=True))


def _bulk_build(sets: dict[str, dict[int, int]]) -> dict[str, Postings]:
    """Every bucket of a fresh index at once: two flat read-only arrays, one view per token.

    Ids are interned in load order, so each token's ids usually arrive ascending already; a
    token whose ids do not is sorted on its own.
    """
    tokens = [token for token, bucket in sets.items() if bucket]
    if not tokens:
        return {}
    sizes = np.fromiter((len(sets[t]) for t in tokens), dtype=np.int64, count=len(tokens))
    total = int(sizes.sum())
    ids = np.fromiter(chain.from_iterable(sets[t].keys() for t in tokens), POSTING_ID, total)
    tfs = np.fromiter(chain.from_iterable(sets[t].values() for t in tokens), POSTING_TF, total)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    descending = np.flatnonzero(ids[1:] <= ids[:-1]) + 1
    inside = descending[~np.isin(descending, starts)]
    for index in set(np.searchsorted(ends, inside, side="right").tolist()):
        a, b = int(starts[index]), int(ends[index])
        order = np.argsort(ids[a:b], kind="stable") + a
        ids[a:b], tfs[a:b] = ids[order], tfs[order]
    _frozen(ids)
    _frozen(tfs)
    buckets = Postings.views(ids, tfs, starts.tolist(), ends.tolist())
    return dict(zip(tokens, buckets, strict=True))


def _build(sets: dict[int, int]) -> Postings:
    ids = sorted(sets)
    return Postings(
        np.array(ids, dtype=POSTING_ID), np.array([sets[i] for i in ids], dtype=POSTING_TF)
    )


def _apply(
    original: Postings | None, sets: dict[int, int] | None, drops: set[int] | None
) -> Postings | None:
    """``original`` with the edits applied: the original object when nothing changed, None when
    the bucket ends empty."""
    if original is None:
        return _build(sets) if sets else None
    touched_count = (len(drops) if drops else 0) + (len(sets) if sets else 0)
    if touched_count == 1 or (sets and drops and len(sets) == 1 and drops == set(sets)):
        return _apply_one(original, sets, drops)
    ids, tfs = original.ids, original.tfs
    touched = (drops or set()) | (sets.keys() if sets else set())
    if touched:
        wanted = np.fromiter(touched, dtype=np.int64, count=len(touched))
        keep = ~np.isin(ids, wanted, assume_unique=True)
        ids, tfs = ids[keep], tfs[keep]
    if sets:
        add_ids = np.fromiter(sets, dtype=POSTING_ID, count=len(sets))
        add_tfs = np.fromiter(sets.values(), dtype=POSTING_TF, count=len(sets))
        ids = np.concatenate((ids, add_ids))
        tfs = np.concatenate((tfs, add_tfs))
        order = np.argsort(ids, kind="stable")
        ids, tfs = ids[order], tfs[order]
    if ids.shape[0] == 0:
        return None
    if np.array_equal(ids, original.ids) and np.array_equal(tfs, original.tfs):
        return original
    return Postings(np.ascontiguousarray(ids), np.ascontiguousarray(tfs))


# BM25 (Robertson/Sparck Jones idf), memhtml's constants.
BM25_K1: Final = 1.2
BM25_B: Final = 0.75


class _LengthNorms:
    """BM25's per-document length term, ``k1 * ((1 - b) + b * len / avg)``, per index.

    It depends only on the index (its lengths and their average), so it is computed once per
    version rather than per query, by the same operations in the same order (so every value is
    the float the per-query expression gives). The few most recent indexes are kept, weakly.
    """

    def __init__(self, capacity: int = 8) -> None:
        self._capacity = capacity
        self._norms: dict[int, tuple[weakref.ref[LexicalIndex], FloatArray]] = {}
        self._lock = threading.Lock()

    def of(self, lexical: LexicalIndex) -> FloatArray:
        key = id(lexical)
        entry = self._norms.get(key)
        if entry is not None and entry[0]() is lexical:
            return entry[1]
        divisor = (lexical.total_length / lexical.doc_count) or 1.0
        norms = _frozen(BM25_K1 * ((1 - BM25_B) + (BM25_B * lexical.lengths) / divisor))
        with self._lock:
            self._norms.pop(key, None)
            self._norms[key] = (weakref.ref(lexical), norms)
            while len(self._norms) > self._capacity:
                del self._norms[next(iter(self._norms))]
        return norms


_LENGTH_NORMS: Final = _LengthNorms()


def bm25_scores(lexical: LexicalIndex, query: str) -> tuple[IdArray, FloatArray]:
    """Every document sharing a token with ``query``, and its BM25 score.

    Each distinct query token counts once (first occurrence kept). The arithmetic follows
    memhtml's operation by operation, in the same order, so scores agree to the last bit:
    ``idf = ln((N - n + 0.5) / (n + 0.5) + 1)`` and
    ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg))``, summed per token in query order.

    In a fixed number of numpy steps whatever the query's length: the query's buckets are
    concatenated in query-token order and weighted in one pass (the length term from
    :class:`_LengthNorms`); then ``np.bincount`` sums each document's weights in input order,
    which is the per-token order (``0.0 + w1 + w2 …``), so every score is the same float. A
    weight is never zero (``idf > 0``: its log's argument exceeds 1; ``tf >= 1``), so a document
    matched exactly when its score is nonzero.
    """
    if lexical.doc_count == 0:
        return _no_ids(), _no_tfs()
    postings = lexical.postings
    buckets = [
        bucket for bucket in map(postings.get, dict.fromkeys(tokenize(query))) if bucket is not None
    ]
    return _summed_bm25(lexical, [(bucket.ids, bucket.tfs) for bucket in buckets])


def _summed_bm25(lexical: LexicalIndex, terms: list[tuple[Any, Any]]) -> tuple[IdArray, FloatArray]:
    """Each document's BM25 score over ``terms``, each a term's ``(ids, tfs)`` in query order
    (:func:`bm25_scores` says why the order and the operations are memhtml's); the documents
    with a nonzero score, ascending, and their scores."""
    if not terms:
        return _no_ids(), _no_tfs()
    n_docs = lexical.doc_count
    sizes = [int(ids.shape[0]) for ids, _ in terms]
    idfs = np.array(
        [math.log((n_docs - count + 0.5) / (count + 0.5) + 1) for count in sizes],
        dtype=np.float64,
    )
    if len(terms) == 1:
        ids, tf = terms[0][0], terms[0][1].astype(np.float64)
    else:
        ids = np.concatenate([ids for ids, _ in terms])
        tf = np.concatenate([tfs for _, tfs in terms], dtype=np.float64)
    norms = _LENGTH_NORMS.of(lexical)
    normalized = (tf * (BM25_K1 + 1)) / (tf + norms[ids])
    weights = np.repeat(idfs, sizes) * normalized
    scores = np.bincount(ids, weights=weights, minlength=norms.shape[0]).astype(
        np.float64, copy=False
    )
    # A boolean mask's nonzero is ~4x quicker than a float array's (measured at 10,000).
    matched = (scores > 0.0).nonzero()[0].astype(np.int64, copy=False)
    return matched, scores[matched]


def bm25_group_scores(
    lexical: LexicalIndex, groups: Iterable[Iterable[str]]
) -> tuple[IdArray, FloatArray]:
    """BM25 with each query term a *group* of index tokens counted as one token (the forms of
    one stem, :mod:`headd.head.stems`): a document's term frequency is the sum of its group's,
    the group's document frequency the number of documents holding any of them. That is BM25
    over an index whose tokens were the groups, computed from this one (the document lengths
    are the same: grouping changes no token count). A group of one token weighs a document as
    :func:`bm25_scores` does; groups with no token in the index are skipped."""
    if lexical.doc_count == 0:
        return _no_ids(), _no_tfs()
    postings = lexical.postings
    merged: list[tuple[Any, Any]] = []
    for group in groups:
        buckets = [bucket for bucket in map(postings.get, group) if bucket is not None]
        if not buckets:
            continue
        if len(buckets) == 1:
            merged.append((buckets[0].ids, buckets[0].tfs))
            continue
        # Summed per document by id (a pass over ids up to the largest, cheaper than sorting
        # the concatenation once a group is a few hundred documents long).
        per_id = np.bincount(
            np.concatenate([bucket.ids for bucket in buckets]),
            weights=np.concatenate([bucket.tfs for bucket in buckets], dtype=np.float64),
        )
        held = (per_id > 0.0).nonzero()[0]
        merged.append((held, per_id[held]))
    return _summed_bm25(lexical, merged)
