"""The lexical arm's index: per-token postings with term frequencies, and per-document lengths.

Shape, and why. memhtml keeps ``token -> path -> tf`` as nested persistent maps. Measured here, a
lexical index of nested pyrsistent maps costs ~3 s to build at 10,000 documents and ~3 ms to walk
one common bucket, so a load would miss 3 s and a query 2 ms on that alone. What the head's tests
need is sharing by identity at the level of a *token bucket*: a version built from its parent
shares every bucket the change did not touch. So the token map is a persistent ``PMap`` (shared
node for node), and each bucket is an immutable :class:`Postings`, two read-only numpy arrays
(document ids ascending, term frequencies), replaced whole when a document in it changes. BM25
then scores a bucket in one vectorized step.

Document lengths are one read-only float array indexed by document id (``-1`` for a document the
index does not hold). A new version copies it once per batch of changes (80 KB at 10,000 paths),
which costs less than a persistent map and keeps the length lookup vectorized.

Ids come from :data:`headd.head.ids.PATH_IDS`, so they are stable across versions.

Only active records are indexed; the caller (``indexes.py``) decides which those are.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import chain
from typing import Final

import numpy as np
from numpy.typing import NDArray
from pyrsistent import PMap, pmap

from headd.head.ids import PATH_IDS
from headd.record import MemoryRecord

#: English function words dropped before indexing and before scoring a query: a short closed
#: list (57 words), because a longer one starts dropping content words a memory corpus is
#: searched by (``system``, ``time``).
STOP_WORDS: Final[frozenset[str]] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "s",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
    ]
)

# Python's Unicode ``\w`` is letters (L*), numbers (N*) and underscore: exactly memhtml's
# ``[\p{L}\p{N}_]``. A token is a maximal run of them, which is what splitting on the complement
# and dropping empties yields.
_WORD_RUN = re.compile(r"\w+")

IdArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


# The same split for ASCII text, without the regex engine: every ASCII character that is not a
# letter, digit or underscore becomes a space (measured ~5x faster than ``findall``).
_ASCII_NON_WORD = str.maketrans(
    {chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
)


def tokenize(text: str) -> list[str]:
    """Lowercase, split on runs of characters other than letters, numbers and ``_``, drop stop words."""
    lowered = text.lower()
    if lowered.isascii():
        words = lowered.translate(_ASCII_NON_WORD).split()
    else:
        words = _WORD_RUN.findall(lowered)
    return [token for token in words if token not in STOP_WORDS]


def indexed_text(record: MemoryRecord) -> str:
    """What a record is indexed by: its title, its claim, then its whole body (which opens with
    the claim, so the claim's words count twice)."""
    return f"{record.title} {record.claim} {record.body_text}"


def term_frequencies(record: MemoryRecord) -> dict[str, int]:
    """Token -> count over the record's indexed text, in first-occurrence order."""
    return dict(Counter(tokenize(indexed_text(record))))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


_NO_IDS: Final[IdArray] = _frozen(np.zeros(0, dtype=np.int64))
_NO_TFS: Final[FloatArray] = _frozen(np.zeros(0, dtype=np.float64))


class Postings:
    """One token's bucket: document ids ascending and their term frequencies. Immutable."""

    __slots__ = ("ids", "tfs")

    ids: IdArray
    tfs: FloatArray

    def __init__(self, ids: IdArray, tfs: FloatArray) -> None:
        self.ids = ids if not ids.flags.writeable else _frozen(ids)
        self.tfs = tfs if not tfs.flags.writeable else _frozen(tfs)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Postings):
            return NotImplemented
        return bool(np.array_equal(self.ids, other.ids) and np.array_equal(self.tfs, other.tfs))

    def __hash__(self) -> int:
        return hash((self.ids.tobytes(), self.tfs.tobytes()))

    def as_dict(self) -> dict[str, int]:
        """Path -> tf, for tests and debugging."""
        return {
            PATH_IDS.path(int(i)): int(tf)
            for i, tf in zip(self.ids.tolist(), self.tfs.tolist(), strict=True)
        }

    def __repr__(self) -> str:
        return f"Postings({len(self)} documents)"


@dataclass(frozen=True, eq=False)
class LexicalIndex:
    """The persistent lexical index of one version (active records only)."""

    postings: PMap[str, Postings] = field(default_factory=pmap)
    #: Token count of each document by id; ``-1`` where the index holds no document.
    lengths: FloatArray = field(default_factory=lambda: _NO_TFS)
    #: How many documents the index holds: BM25's N.
    doc_count: int = 0
    #: Sum of every length, so the average length is O(1) at query time.
    total_length: int = 0

    def length_of(self, ident: int) -> float | None:
        if ident >= self.lengths.shape[0]:
            return None
        value = float(self.lengths[ident])
        return None if value < 0 else value

    def document_lengths(self) -> dict[str, int]:
        """Path -> length for every document held (tests and debugging)."""
        held = np.flatnonzero(self.lengths >= 0)
        return {PATH_IDS.path(int(i)): int(self.lengths[i]) for i in held}

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


EMPTY_LEXICAL: Final = LexicalIndex()


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
        self._bulk_ids: list[int] = []
        self._bulk_sizes: list[int] = []
        self._bulk_tokens: list[str] = []
        self._bulk_tfs: list[int] = []

    def _leave_bulk(self) -> None:
        if not self._bulk:
            return
        self._bulk = False
        tokens, tfs = iter(self._bulk_tokens), iter(self._bulk_tfs)
        sets = self._sets
        for ident, size in zip(self._bulk_ids, self._bulk_sizes, strict=True):
            for _ in range(size):
                sets[next(tokens)][ident] = next(tfs)
        self._bulk_ids, self._bulk_sizes, self._bulk_tokens, self._bulk_tfs = [], [], [], []

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
            self._bulk_ids.append(ident)
            self._bulk_sizes.append(len(frequencies))
            self._bulk_tokens.extend(frequencies)
            self._bulk_tfs.extend(frequencies.values())
        else:
            sets = self._sets
            for token, count in frequencies.items():
                sets[token][ident] = count
        length = sum(frequencies.values())
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
                _invert(self._bulk_ids, self._bulk_sizes, self._bulk_tokens, self._bulk_tfs)
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
        lengths = base.lengths
        if self._length_changes:
            size = max(len(PATH_IDS), max(self._length_changes) + 1)
            lengths = np.full(size, -1.0, dtype=np.float64)
            lengths[: base.lengths.shape[0]] = base.lengths
            changed = np.fromiter(
                self._length_changes, dtype=np.int64, count=len(self._length_changes)
            )
            values = np.fromiter(
                (-1.0 if v is None else float(v) for v in self._length_changes.values()),
                dtype=np.float64,
                count=len(self._length_changes),
            )
            lengths[changed] = values
        return LexicalIndex(
            postings=postings,
            lengths=_frozen(lengths),
            doc_count=self._doc_count,
            total_length=self._total_length,
        )


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
        return Postings(np.delete(ids, position), np.delete(tfs, position))
    if present:
        if float(tfs[position]) == float(count):
            return original
        new_tfs = tfs.copy()
        new_tfs[position] = float(count)
        return Postings(ids, new_tfs)
    return Postings(np.insert(ids, position, ident), np.insert(tfs, position, float(count)))


def _invert(
    ids: list[int], sizes: list[int], tokens: list[str], tfs: list[int]
) -> dict[str, Postings]:
    """Flat runs of (token, tf) per document -> every bucket, with one stable sort.

    Buckets are views into two read-only arrays, ids ascending within each.
    """
    if not tokens:
        return {}
    vocabulary: dict[str, int] = {}
    codes = np.fromiter(
        [vocabulary.setdefault(token, len(vocabulary)) for token in tokens],
        dtype=np.int64,
        count=len(tokens),
    )
    doc_ids = np.repeat(np.array(ids, dtype=np.int64), np.array(sizes, dtype=np.int64))
    order = np.lexsort((doc_ids, codes))
    flat_ids = _frozen(np.ascontiguousarray(doc_ids[order]))
    flat_tfs = _frozen(np.array(tfs, dtype=np.float64)[order])
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], sorted_codes.shape[0]]
    names = list(vocabulary)
    return {
        names[code]: Postings(flat_ids[a:b], flat_tfs[a:b])
        for code, a, b in zip(
            sorted_codes[starts].tolist(), starts.tolist(), ends.tolist(), strict=True
        )
    }


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
    ids = np.fromiter(chain.from_iterable(sets[t].keys() for t in tokens), np.int64, total)
    tfs = np.fromiter(chain.from_iterable(sets[t].values() for t in tokens), np.float64, total)
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
    bounds = zip(starts.tolist(), ends.tolist(), strict=True)
    return {t: Postings(ids[a:b], tfs[a:b]) for t, (a, b) in zip(tokens, bounds, strict=True)}


def _build(sets: dict[int, int]) -> Postings:
    ids = sorted(sets)
    return Postings(
        np.array(ids, dtype=np.int64), np.array([sets[i] for i in ids], dtype=np.float64)
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
        add_ids = np.fromiter(sets, dtype=np.int64, count=len(sets))
        add_tfs = np.fromiter(sets.values(), dtype=np.float64, count=len(sets))
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


def bm25_scores(lexical: LexicalIndex, query: str) -> tuple[IdArray, FloatArray]:
    """Every document sharing a token with ``query``, and its BM25 score.

    Each distinct query token counts once (first occurrence kept). The arithmetic follows
    memhtml's operation by operation, in the same order, so scores agree to the last bit:
    ``idf = ln((N - n + 0.5) / (n + 0.5) + 1)`` and
    ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg))``, summed per token in query order.
    """
    n_docs = lexical.doc_count
    if n_docs == 0:
        return _NO_IDS, _NO_TFS
    average = lexical.total_length / n_docs
    divisor = average or 1.0
    scores: FloatArray | None = None
    matched: NDArray[np.bool_] | None = None
    lengths = lexical.lengths
    for token in dict.fromkeys(tokenize(query)):
        bucket = lexical.postings.get(token)
        if bucket is None:
            continue
        if scores is None or matched is None:
            scores = np.zeros(lengths.shape[0], dtype=np.float64)
            matched = np.zeros(lengths.shape[0], dtype=np.bool_)
        count = len(bucket)
        idf = math.log((n_docs - count + 0.5) / (count + 0.5) + 1)
        tf = bucket.tfs
        length = lengths[bucket.ids]
        normalized = (tf * (BM25_K1 + 1)) / (
            tf + BM25_K1 * ((1 - BM25_B) + (BM25_B * length) / divisor)
        )
        scores[bucket.ids] += idf * normalized
        matched[bucket.ids] = True
    if scores is None or matched is None:
        return _NO_IDS, _NO_TFS
    ids = np.flatnonzero(matched).astype(np.int64, copy=False)
    return ids, scores[ids]
