"""What the vector arm embeds, the cache of those vectors, and the fill that pays for them.

A record's vector is made of two embedded texts, each cached under a key of what was embedded,
inside a cache that belongs to one vector space (a model id and a dimension):

- its article, keyed by the content hash (which digests the ``<article>`` and nothing else), so
  an unchanged article keeps its vector across versions, moves and head-only edits;
- its title (in a conversation: who spoke, and when), keyed by :func:`title_key_of`, a digest of
  the title text, so records sharing a title share one vector and a head-only edit that keeps
  the title embeds nothing; one that changes it embeds the new title alone.

The record's vector is the sum of the two unit vectors, the title's weighted by
:data:`TITLE_WEIGHT` (:func:`record_vector`); a record whose title is blank has its article's
vector alone. Why the title is embedded apart rather than with the article: docs/design.md,
"Search quality".

:class:`VectorCache` is an immutable value (a read-only matrix of unit rows, a row per key);
a fill returns a new cache beside the old, and vectors of another space are refused
(:class:`EmbedModelMismatch`), never mixed. The daemon persists caches in ``index.db``
(``headd_plane.head_vectors``). :func:`fill_vectors` is the one step that calls an embedder, so
search stays pure.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol

import msgspec
import numpy as np
import numpy.typing as npt

from headd.embed.port import DocumentEmbedder
from headd.errors import EmbedModelMismatch, ModelUnavailable
from headd.head.ids import utf16_key
from headd.head.indexes import HeadView, IndexedView, indexes_of
from headd.head.row_products import row_products
from headd.record import MemoryRecord

log = logging.getLogger(__name__)

#: The longest text one record embeds, in UTF-16 code units (memhtml's chunk ceiling).
VECTOR_TEXT_MAX_CHARS: Final = 1_800


#: How many of the best cosines ``VersionMatrix.ranked`` sorts before walking them (ties at the
#: cut included); a full sort of every row only when ``admit`` refuses too many of them. A full
#: stable sort of every cosine would be a real share of a hybrid search's 4 ms at 10,000.
VECTOR_WINDOW: Final = 128


class VectorSpace(msgspec.Struct, frozen=True):
    """One embedder's vector space. Caches of different spaces hold incomparable vectors."""

    model_id: str
    dim: int

    @property
    def id(self) -> str:
        """``<model id>@<dimension>``, the form an embedder's ``space`` and index.db use."""
        return f"{self.model_id}@{self.dim}"

    @classmethod
    def parse(cls, text: str) -> VectorSpace:
        model_id, separator, dim = text.rpartition("@")
        if not separator or not model_id or not dim.isdigit() or int(dim) <= 0:
            raise EmbedModelMismatch(f"not a vector space id: {text}", {"space": text})
        return cls(model_id, int(dim))


def _cut_utf16(text: str, limit: int) -> str:
    """The first ``limit`` UTF-16 code units of ``text`` (JavaScript's ``slice(0, limit)``)."""
    if len(text) <= limit // 2 or text.isascii():
        return text[:limit]
    units = 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > limit:
            # A cut through a surrogate pair keeps the high half in JavaScript; a Python str
            # cannot hold it usefully, so the pair is dropped whole.
            return text[:index]
        units += width
    return text


def vector_text_of(record: MemoryRecord) -> str:
    """The article text (which opens with the claim), trimmed, cut at 1,800 UTF-16 units."""
    return _cut_utf16(record.body_text.strip(), VECTOR_TEXT_MAX_CHARS)


#: How much of a record's vector its title's unit vector is, beside its article's.
TITLE_WEIGHT: Final = 1.0

_TITLE_KEY_PREFIX: Final = "title:sha256:"


@functools.lru_cache(maxsize=1 << 16)
def title_key_of(title: str) -> str:
    """The cache key of a title's vector: a digest of the title text as embedded."""
    return _TITLE_KEY_PREFIX + hashlib.sha256(title.encode("utf-8")).hexdigest()


def title_text_of(record: MemoryRecord) -> str:
    """The title as embedded: trimmed, cut at 1,800 UTF-16 units; empty for a blank title."""
    return _cut_utf16(record.title.strip(), VECTOR_TEXT_MAX_CHARS)


def vector_keys_of(record: MemoryRecord) -> tuple[str, ...]:
    """The cache keys a record's vector is made of: its content hash, then its title's key."""
    title = title_text_of(record)
    if not title:
        return (record.content_hash,)
    return (record.content_hash, title_key_of(title))


def record_vector(
    article: npt.NDArray[np.float32], title: npt.NDArray[np.float32] | None
) -> npt.NDArray[np.float32]:
    """A record's vector from its article's and title's: unit article + TITLE_WEIGHT * unit title
    (not normalized: cosine is indifferent to the length)."""
    if title is None:
        return article
    article_norm = float(np.sqrt(np.dot(article.astype(np.float64), article)))
    title_norm = float(np.sqrt(np.dot(title.astype(np.float64), title)))
    combined = np.zeros_like(article, dtype=np.float32)
    if article_norm > 0.0:
        combined += article / article_norm
    if title_norm > 0.0:
        combined += np.float32(TITLE_WEIGHT) * (title / title_norm)
    return combined


def vector_of_record(
    vectors: Mapping[str, npt.ArrayLike] | VectorLookup, record: MemoryRecord
) -> npt.NDArray[np.float32] | None:
    """``record``'s vector from any lookup by key (a dict fits): its article's vector with its
    title's when the lookup has one, None when it has no vector of the article."""
    keys = vector_keys_of(record)
    article = vectors.get(keys[0])
    if article is None:
        return None
    title = vectors.get(keys[1]) if len(keys) > 1 else None
    return record_vector(
        np.asarray(article, dtype=np.float32),
        None if title is None else np.asarray(title, dtype=np.float32),
    )


class VectorLookup(Protocol):
    """Vectors by cache key (content hash or title key): a dict fits, so does a cache."""

    def get(self, key: str, /) -> npt.ArrayLike | None: ...


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


#: How a cache stores its rows: unit vectors in half precision (docs/design/vectors.md, "One
#: copy of each vector"). A record's vector sums unit rows and every score is a cosine, so no
#: path reads a vector's length; the index.db rows keep the embedder's float32 values.
CACHE_DTYPE: Final = np.float16


#: Rows converted at a time, so a load of every stored vector holds no second full-size copy.
_UNIT_CHUNK: Final = 4_096


def _lengths(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """Each float32 row's length, summed in float64."""
    lengths: npt.NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    return lengths


def _inverses(lengths: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``1 / length`` of each row, 0 for a zero row."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lengths > 0, 1.0 / np.where(lengths > 0, lengths, 1.0), 0.0)


def _row_norms(matrix: npt.NDArray[np.generic]) -> npt.NDArray[np.float64]:
    """Each row's length, in float64, a chunk of rows at a time."""
    out = np.empty(matrix.shape[0], dtype=np.float64)
    for start in range(0, matrix.shape[0], _UNIT_CHUNK):
        out[start : start + _UNIT_CHUNK] = _lengths(
            matrix[start : start + _UNIT_CHUNK].astype(np.float32)
        )
    return out


def unit_rows(matrix: npt.ArrayLike) -> npt.NDArray[np.float16]:
    """Each row over its length (a zero row stays zero), as the cache stores it."""
    values = np.asarray(matrix)
    out = np.empty(values.shape, dtype=CACHE_DTYPE)
    for start in range(0, values.shape[0], _UNIT_CHUNK):
        chunk = values[start : start + _UNIT_CHUNK].astype(np.float32)
        scale = _inverses(_lengths(chunk))
        out[start : start + _UNIT_CHUNK] = chunk * scale[:, None].astype(np.float32)
    return out


class VectorCache:
    """Vectors of one space by content hash. Immutable: :meth:`with_vectors` returns a new one.

    One copy of each vector: its unit row in :data:`CACHE_DTYPE`, and beside it the float32
    scale that brings the rounded row back to length 1 (a zero row's is 0), so a record's
    vector sums rows of length 1 exactly as :func:`record_vector` would; :meth:`get` answers
    the scaled row as float32."""

    __slots__ = ("_matrix", "_rows", "_scale", "space")

    def __init__(
        self,
        space: VectorSpace,
        rows: dict[str, int] | None = None,
        matrix: npt.NDArray[np.float32] | None = None,
        *,
        unit: npt.NDArray[np.float16] | None = None,
    ) -> None:
        self.space = space
        self._rows: dict[str, int] = rows or {}
        given: npt.NDArray[np.generic]
        if unit is None:
            given = np.zeros((0, space.dim), dtype=np.float32) if matrix is None else matrix
        else:
            given = unit
        shape = np.shape(given)
        if len(shape) != 2 or shape[1] != space.dim or shape[0] != len(self._rows):
            raise EmbedModelMismatch(
                f"a cache of {space.id} cannot hold a {shape} matrix",
                {"space": space.id},
            )
        self._matrix = _frozen(
            unit_rows(given) if unit is None else np.ascontiguousarray(unit, dtype=CACHE_DTYPE)
        )
        self._scale = _frozen(_inverses(_row_norms(self._matrix)).astype(np.float32))

    @classmethod
    def empty(cls, space: VectorSpace) -> VectorCache:
        return cls(space)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, content_hash: object) -> bool:
        return content_hash in self._rows

    def get(self, content_hash: str, /) -> npt.NDArray[np.float32] | None:
        """The key's unit vector (float32), or None."""
        row = self._rows.get(content_hash)
        return None if row is None else self._unit(row)

    def _unit(self, row: int) -> npt.NDArray[np.float32]:
        """Row ``row`` as a float32 vector of length 1 (or 0)."""
        unit: npt.NDArray[np.float32] = self._matrix[row].astype(np.float32) * self._scale[row]
        return unit

    def hashes(self) -> Iterable[str]:
        return self._rows.keys()

    def covers(self, record: MemoryRecord) -> bool:
        """Whether the cache holds every vector ``record``'s vector is made of."""
        return all(key in self._rows for key in vector_keys_of(record))

    def vector_of(self, record: MemoryRecord) -> npt.NDArray[np.float32] | None:
        """``record``'s vector (:func:`record_vector` of its rows, which are unit already, so
        they are summed as held), or None while a part of it is missing."""
        keys = vector_keys_of(record)
        article = self._rows.get(keys[0])
        title = self._rows.get(keys[1]) if len(keys) > 1 else -1
        if article is None or title is None:
            return None
        vector = self._unit(article)
        if title >= 0:
            vector += np.float32(TITLE_WEIGHT) * self._unit(title)
        return vector

    def _scaled(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """``rows`` of the matrix as float32 vectors of length 1 (or 0)."""
        out = np.empty((rows.shape[0], self.space.dim), dtype=np.float32)
        scaled: npt.NDArray[np.float32] = np.multiply(
            self._matrix[rows], self._scale[rows][:, None], out=out
        )
        return scaled

    def record_cosines(
        self, records: Sequence[MemoryRecord], query: npt.ArrayLike
    ) -> list[float | None]:
        """The cosine of each record's vector against ``query`` (None where it has none).

        Two row gathers (articles, titles) and one float32 product; a zero vector scores 0.
        """
        rows = self._rows
        articles: list[int] = []
        titles: list[int] = []
        held: list[int] = []
        for index, record in enumerate(records):
            keys = vector_keys_of(record)
            article = rows.get(keys[0])
            title = rows.get(keys[1]) if len(keys) > 1 else -1
            if article is None or title is None:
                continue
            held.append(index)
            articles.append(article)
            titles.append(title)
        out: list[float | None] = [None] * len(records)
        if not held:
            return out
        article_rows = np.fromiter(articles, dtype=np.int64, count=len(articles))
        title_rows = np.fromiter(titles, dtype=np.int64, count=len(titles))
        matrix = self._scaled(article_rows)
        titled = title_rows >= 0
        matrix[titled] += np.float32(TITLE_WEIGHT) * self._scaled(title_rows[titled])
        return _cosines_of(matrix, query, held, out)

    def with_vectors(self, hashes: Sequence[str], vectors: npt.ArrayLike) -> VectorCache:
        """This cache plus ``vectors`` (one row per hash); a hash already held is replaced."""
        if len(hashes) == 0:
            return self
        rows = dict(self._rows)
        unit = unit_rows(vectors)
        held = self._matrix.shape[0]
        replaced: list[tuple[int, int]] = []
        appended: list[int] = []
        for index, content_hash in enumerate(hashes):
            row = rows.get(content_hash)
            if row is not None and row < held:
                replaced.append((row, index))
            elif row is not None:
                appended[row - held] = index
            else:
                rows[content_hash] = held + len(appended)
                appended.append(index)
        matrix = np.empty((held + len(appended), self.space.dim), dtype=CACHE_DTYPE)
        matrix[:held] = self._matrix
        for row, index in replaced:
            matrix[row] = unit[index]
        if appended:
            matrix[held:] = unit[np.asarray(appended, dtype=np.int64)]
        return VectorCache(self.space, rows, unit=matrix)

    def cosines(self, content_hashes: Sequence[str], query: npt.ArrayLike) -> list[float | None]:
        """The cosine of each hash's vector against ``query`` (None where the cache has none).

        One float32 product over the rows asked for; a zero vector (or query) scores 0.
        """
        wanted = [self._rows.get(h) for h in content_hashes]
        held = [index for index, row in enumerate(wanted) if row is not None]
        out: list[float | None] = [None] * len(wanted)
        if not held:
            return out
        index = np.fromiter((wanted[i] for i in held), dtype=np.int64, count=len(held))
        return _cosines_of(self._scaled(index), query, held, out)


def _cosines_of(
    matrix: npt.NDArray[np.float32],
    query: npt.ArrayLike,
    held: Sequence[int],
    out: list[float | None],
) -> list[float | None]:
    """``out`` with each row's cosine against ``query`` at its place in ``held`` (a zero row or
    query scores 0)."""
    query_vector = np.asarray(query, dtype=np.float32)
    query_norm = float(np.sqrt(np.dot(query_vector.astype(np.float64), query_vector)))
    dots = (matrix @ query_vector).astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)) * query_norm
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    for index, score in zip(held, scores.tolist(), strict=True):
        out[index] = score
    return out


class FillCounts(msgspec.Struct, frozen=True):
    """What one fill did, counted over the view's active records."""

    records: int
    #: Records whose vector the cache already held whole.
    reused: int
    #: Distinct texts sent to the embedder (records sharing a content hash, or a title, cost one).
    embedded: int
    #: Active records with no article text, which the vector arm never ranks.
    empty: int


class FillResult(msgspec.Struct, frozen=True):
    cache: VectorCache
    counts: FillCounts
    #: Distinct texts still missing: non-zero only when ``limit`` held some back.
    remaining: int
    #: The keys this fill embedded (what a persisted cache appends).
    filled: tuple[str, ...] = ()
    #: The embedder's float32 vectors of ``filled``, one row each, as it answered them.
    vectors: npt.NDArray[np.float32] | None = None


def fill_vectors(
    view: HeadView | IndexedView,
    cache: VectorCache,
    embedder: DocumentEmbedder,
    limit: int | None = None,
) -> FillResult:
    """Embed, in one call, the texts of active records whose vectors ``cache`` lacks.

    Texts go in path order (so a limited fill is deterministic), a record's article then its
    title, one per distinct key (:func:`vector_keys_of`); archived records and empty articles
    are skipped. Vectors for hashes the view no longer holds
    stay. An embedder of another space is refused before anything is sent; one that answers
    with the wrong number of vectors or the wrong width ends the fill with nothing stored.
    """
    if embedder.space != cache.space.id:
        raise EmbedModelMismatch(
            f"embedder {embedder.space} cannot fill a cache of {cache.space.id}",
            {"embedder": embedder.space, "cache": cache.space.id},
        )
    records = sorted(
        (record for record in view.records() if not record.archived),
        key=lambda record: utf16_key(record.path),
    )
    reused = empty = 0
    missing: dict[str, str] = {}
    for record in records:
        if cache.covers(record):
            reused += 1
            continue
        text = vector_text_of(record)
        if not text:
            empty += 1
            continue
        keys = vector_keys_of(record)
        if keys[0] not in cache:
            missing.setdefault(keys[0], text)
        if len(keys) > 1 and keys[1] not in cache:
            missing.setdefault(keys[1], title_text_of(record))
    if not missing:
        return FillResult(cache, FillCounts(len(records), reused, 0, empty), 0)
    batch = list(missing.items())[: len(missing) if limit is None else max(0, limit)]
    if not batch:
        return FillResult(cache, FillCounts(len(records), reused, 0, empty), len(missing))
    hashes = [content_hash for content_hash, _ in batch]
    vectors = np.asarray(embedder.embed([text for _, text in batch]), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(hashes):
        raise ModelUnavailable(
            f"embedder {embedder.space} returned {vectors.shape[0] if vectors.ndim else 0} "
            f"vectors for {len(hashes)} texts",
            {"space": embedder.space, "reason": "wrong count"},
        )
    if vectors.shape[1] != cache.space.dim:
        raise EmbedModelMismatch(
            f"embedder returned vectors of {vectors.shape[1]} dimensions for {cache.space.id}",
            {"space": cache.space.id, "dimensions": int(vectors.shape[1])},
        )
    filled = cache.with_vectors(hashes, vectors)
    log.debug("filled %d vectors (%d remaining)", len(hashes), len(missing) - len(hashes))
    return FillResult(
        filled,
        FillCounts(len(records), reused, len(hashes), empty),
        len(missing) - len(hashes),
        tuple(hashes),
        vectors,
    )


class VersionMatrix:
    """One version's vector arm as a contiguous matrix: a row per active record.

    Built once per followed version and then *moved*: :meth:`move_to` rewrites only the rows
    whose content hash changed (or that gained a vector from a newer cache), so a search is one
    matrix-vector product instead of gathering every active record's vector again. Mutable by
    design, so only one owner (the daemon's event loop) may hold and move it; the rows of a
    record without a vector stay in the matrix, masked, until the cache has one.
    """

    __slots__ = (
        "_free",
        "_has",
        "_hash",
        "_keys",
        "_live",
        "_matrix",
        "_missing",
        "_norms",
        "_paths",
        "_records",
        "_row_of",
        "_used",
        "cache",
        "view",
    )

    def __init__(self, view: HeadView | IndexedView, cache: VectorCache) -> None:
        self.view = view
        self.cache = cache
        dim = cache.space.dim
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._norms = np.zeros(0, dtype=np.float64)
        self._live = np.zeros(0, dtype=bool)
        self._has = np.zeros(0, dtype=bool)
        self._paths: list[str] = []
        self._keys: list[str] = []
        self._records: list[MemoryRecord | None] = []
        self._hash: list[tuple[str, ...]] = []
        self._row_of: dict[str, int] = {}
        self._missing: dict[int, tuple[str, ...]] = {}
        self._free: list[int] = []
        self._used = 0

    @classmethod
    def build(cls, view: HeadView | IndexedView, cache: VectorCache) -> VersionMatrix:
        matrix = cls(view, cache)
        matrix._reserve(len(indexes_of(view).active))
        matrix._sync(view, cache, rows_changed_only=False)
        return matrix

    # -- rows ------------------------------------------------------------------------------

    def _reserve(self, rows: int) -> None:
        capacity = self._matrix.shape[0]
        if rows <= capacity:
            return
        grown = max(rows, capacity + capacity // 2, 16)
        for name, dtype in (("_norms", np.float64), ("_live", bool), ("_has", bool)):
            old = getattr(self, name)
            new = np.zeros(grown, dtype=dtype)
            new[:capacity] = old
            setattr(self, name, new)
        matrix = np.zeros((grown, self.cache.space.dim), dtype=np.float32)
        matrix[:capacity] = self._matrix
        self._matrix = matrix
        extra = grown - capacity
        self._paths.extend([""] * extra)
        self._keys.extend([""] * extra)
        self._records.extend([None] * extra)
        self._hash.extend([()] * extra)

    def _set_vector(self, row: int, cache: VectorCache) -> None:
        record = self._records[row]
        vector = None if record is None else cache.vector_of(record)
        if vector is None:
            self._has[row] = False
            self._matrix[row] = 0.0
            self._norms[row] = 0.0
            self._missing[row] = self._hash[row]
            return
        self._matrix[row] = vector
        self._norms[row] = float(np.sqrt(np.dot(vector.astype(np.float64), vector)))
        self._has[row] = True
        self._missing.pop(row, None)

    def _place(self, record: MemoryRecord, cache: VectorCache) -> None:
        if self._free:
            row = self._free.pop()
        else:
            self._reserve(self._used + 1)
            row = self._used
            self._used += 1
        self._row_of[record.path] = row
        self._paths[row] = record.path
        self._keys[row] = utf16_key(record.path)
        self._records[row] = record
        self._hash[row] = vector_keys_of(record)
        self._live[row] = True
        self._set_vector(row, cache)

    def _drop(self, path: str) -> None:
        row = self._row_of.pop(path)
        self._live[row] = False
        self._has[row] = False
        self._records[row] = None
        self._missing.pop(row, None)
        self._free.append(row)

    def _sync(
        self, view: HeadView | IndexedView, cache: VectorCache, *, rows_changed_only: bool
    ) -> int:
        """Bring the rows to ``view``; returns how many matrix rows were rewritten."""
        touched = 0
        active = indexes_of(view).active
        seen: set[str] = set()
        for record in active:
            seen.add(record.path)
            row = self._row_of.get(record.path)
            if row is None:
                self._place(record, cache)
                touched += 1
            elif self._hash[row] != (keys := vector_keys_of(record)):
                self._hash[row] = keys
                self._records[row] = record
                self._set_vector(row, cache)
                touched += 1
            else:
                self._records[row] = record  # a head-only edit keeping the title: same vector
        if rows_changed_only:
            for path in [p for p in self._row_of if p not in seen]:
                self._drop(path)
                touched += 1
        return touched

    def move_to(self, view: HeadView | IndexedView, cache: VectorCache) -> int:
        """Follow ``view`` and ``cache``, rewriting only changed rows; returns their count."""
        touched = 0
        if cache is not self.cache:
            if cache.space != self.cache.space:
                raise EmbedModelMismatch(
                    f"a matrix of {self.cache.space.id} cannot follow a cache of {cache.space.id}",
                    {"space": self.cache.space.id, "cache": cache.space.id},
                )
            for row in list(self._missing):
                if all(key in cache for key in self._hash[row]):
                    self._set_vector(row, cache)
                    touched += 1
            self.cache = cache
        if view is not self.view:
            touched += self._sync(view, cache, rows_changed_only=True)
            self.view = view
        return touched

    # -- reading ---------------------------------------------------------------------------

    @property
    def coverage(self) -> float:
        """Share of the active records that have a vector."""
        live = int(np.count_nonzero(self._live[: self._used]))
        if live == 0:
            return 1.0
        return int(np.count_nonzero(self._has[: self._used])) / live

    def get(self, content_hash: str, /) -> npt.NDArray[np.float32] | None:
        return self.cache.get(content_hash)

    def ranked(
        self,
        query_vector: npt.ArrayLike,
        admit: Callable[[MemoryRecord], bool] | None,
        limit: int,
    ) -> list[tuple[float, str, str]]:
        """(cosine, utf16 key, path) of the best admitted rows: walked in score order a run of
        equal scores at a time until ``limit`` are kept and the run that filled it is done,
        so the caller's (score desc, path asc) cut is the same as over every row."""
        used = self._used
        query = np.asarray(query_vector, dtype=np.float32)
        query_norm = float(np.sqrt(np.dot(query.astype(np.float64), query)))
        valid = np.flatnonzero(self._has[:used])
        if valid.size == 0:
            return []
        dots = row_products(self._matrix[:used], query).astype(np.float64)[valid]
        norms = self._norms[valid] * query_norm
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
        window = max(VECTOR_WINDOW, limit)
        if scores.shape[0] > window:
            # Only the best ``window`` scores (and every score tied with the last of them, so a
            # run of equal scores is never cut) are sorted; the full sort only when ``admit``
            # refused so many of them that the cap is not filled from the window.
            cut = -np.partition(-scores, window - 1)[window - 1]
            candidates = np.flatnonzero(scores >= cut)
            kept = self._walk(
                candidates[np.argsort(-scores[candidates], kind="stable")],
                valid,
                scores,
                admit,
                limit,
            )
            if len(kept) >= limit or candidates.shape[0] == scores.shape[0]:
                return kept
        return self._walk(np.argsort(-scores, kind="stable"), valid, scores, admit, limit)

    def _walk(
        self,
        order: npt.NDArray[np.intp],
        valid: npt.NDArray[np.intp],
        scores: npt.NDArray[np.float64],
        admit: Callable[[MemoryRecord], bool] | None,
        limit: int,
    ) -> list[tuple[float, str, str]]:
        """The admitted rows of ``order`` (positions into ``valid``, best first), a run of
        equal scores at a time, until ``limit`` are kept and the run that filled it is done."""
        # Python lists, not arrays: the walk compares scores one at a time, and a NumPy scalar
        # costs several times a float each time it is read.
        rows: list[int] = valid[order].tolist()
        sorted_scores: list[float] = scores[order].tolist()
        kept: list[tuple[float, str, str]] = []
        index = 0
        total = len(rows)
        while index < total and len(kept) < limit:
            score = sorted_scores[index]
            end = index + 1
            while end < total and sorted_scores[end] == score:
                end += 1
            for row in rows[index:end]:
                record = self._records[row]
                if record is None or (admit is not None and not admit(record)):
                    continue
                kept.append((score, self._keys[row], self._paths[row]))
            index = end
        return kept
