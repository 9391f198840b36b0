"""The record map and every index derived from it, as one immutable value, and its two writers.

:class:`Indexes` holds records by path plus ``by_content_hash`` and ``by_frame_key`` (active
records only), ``inbound`` and ``by_entity`` (all records) and the lexical index (active only).
Every field is persistent: a ``PMap`` whose untouched nodes, untouched multi-map buckets
(a sorted tuple of paths: most hold one path, and a one-path tuple is 48 bytes where a
``frozenset`` is 216) and untouched lexical buckets are the parent's own objects.

``insert_record`` and ``remove_record`` are the only writers, as in memhtml. They run on an
:class:`IndexesBuilder`, a transient that batches many inserts and removes and builds each touched
bucket once at :meth:`IndexesBuilder.freeze`; the one-record functions are a builder of one edit.
A load, an advance and an overlay are all a builder folded over records in order, so a version
built from scratch and one built by advancing agree bucket for bucket.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Final, Protocol, runtime_checkable

from pyrsistent import PMap, pmap

from headd.head.ids import PATH_IDS, utf16_sorted
from headd.head.lexical import (
    EMPTY_LEXICAL,
    CodedTokens,
    LexicalBuilder,
    LexicalIndex,
    indexed_text,
    term_frequencies,
    tokenize,
)
from headd.record import MemoryRecord

#: key -> its paths, a tuple in sorted order (one canonical form, so a load and an advance agree).
Multi = PMap[str, tuple[str, ...]]


def multi_bucket(paths: Iterable[str]) -> tuple[str, ...]:
    """A :data:`Multi` bucket of ``paths``: its one canonical form, which every writer of a
    multi-map (an advance here, a snapshot decode) builds, so their maps compare equal."""
    return tuple(sorted(paths))


@dataclass(frozen=True)
class Indexes:
    """One version's records and indexes."""

    records: PMap[str, MemoryRecord] = field(default_factory=pmap)
    #: content hash -> the ACTIVE path holding it: the first in git tree order of the active
    #: paths carrying it (see ``content_paths``), so an advance and a load agree on twins.
    by_content_hash: PMap[str, str] = field(default_factory=pmap)
    #: content hash -> every ACTIVE path carrying it.
    content_paths: Multi = field(default_factory=pmap)
    #: frame key -> ACTIVE paths whose claim shares it.
    by_frame_key: Multi = field(default_factory=pmap)
    #: href as authored -> paths whose head links point at it. All records.
    inbound: Multi = field(default_factory=pmap)
    #: entity (``type:name`` as authored) -> paths naming it. All records.
    by_entity: Multi = field(default_factory=pmap)
    #: Active records only.
    lexical: LexicalIndex = field(default_factory=lambda: EMPTY_LEXICAL)

    __hash__ = None  # type: ignore[assignment]

    @cached_property
    def active(self) -> tuple[MemoryRecord, ...]:
        """The active records, computed once per value (the vector arm's candidates)."""
        return tuple(record for record in self.records.values() if not record.archived)

    @cached_property
    def with_archived(self) -> Indexes:
        """These records, with a lexical index of every record, archived ones included: what a
        search that reaches archived memories (``include_archived``, ``as_of``) ranks over, so
        an archived record is scored by the same BM25 statistics as an active one and ranked
        beside it. Built over this value's own index at the first such search (only the
        buckets of archived records' tokens are rebuilt) and kept with it, so the active
        index, which every other search reads, never carries archived text."""
        builder = LexicalBuilder(self.lexical)
        for record in self.records.values():
            if record.archived:
                builder.add_tokens(PATH_IDS.intern(record.path), tokenize(indexed_text(record)))
        return Indexes(records=self.records, lexical=builder.freeze())


EMPTY_INDEXES: Final = Indexes()


class _MultiBuilder:
    """Edits to one key -> paths map; untouched and unchanged buckets stay shared."""

    __slots__ = ("_base", "_work")

    def __init__(self, base: Multi) -> None:
        self._base = base
        self._work: dict[str, set[str]] = {}

    def _bucket(self, key: str) -> set[str]:
        bucket = self._work.get(key)
        if bucket is None:
            bucket = self._work[key] = set(self._base.get(key, ()))
        return bucket

    def add(self, key: str, path: str) -> None:
        self._bucket(key).add(path)

    def remove(self, key: str, path: str) -> None:
        self._bucket(key).discard(path)

    def touched(self) -> dict[str, set[str]]:
        return self._work

    def freeze(self) -> Multi:
        base = self._base
        if not self._work:
            return base
        if not base:
            return pmap({key: multi_bucket(v) for key, v in self._work.items() if v})
        evolver = base.evolver()
        for key, members in self._work.items():
            original = base.get(key)
            if not members:
                if original is not None:
                    evolver.remove(key)
                continue
            bucket = multi_bucket(members)
            if original != bucket:
                evolver.set(key, bucket)
        return evolver.persistent()


_REMOVED: Final = object()


def _tree_order(path: str) -> bytes:
    """Git's tree-walk order of full paths: their UTF-8 bytes."""
    return path.encode("utf-8", "surrogateescape")


class IndexesBuilder:
    """A transient over one :class:`Indexes`: any number of inserts and removes, then freeze.

    The semantics are memhtml's ``insertRecord``/``removeRecord`` applied one after another; only
    the building of each touched bucket is deferred to :meth:`freeze`.
    """

    def __init__(self, base: Indexes = EMPTY_INDEXES) -> None:
        self._base = base
        self._records: dict[str, object] = {}
        self._content = _MultiBuilder(base.content_paths)
        self._frame = _MultiBuilder(base.by_frame_key)
        self._inbound = _MultiBuilder(base.inbound)
        self._entity = _MultiBuilder(base.by_entity)
        self._lexical = LexicalBuilder(base.lexical)

    def get(self, path: str) -> MemoryRecord | None:
        found = self._records.get(path)
        if found is None:
            return self._base.records.get(path)
        return None if found is _REMOVED else found  # type: ignore[return-value]

    def remove(self, path: str) -> MemoryRecord | None:
        """Drop the record at ``path`` from every index; returns it (None: nothing there)."""
        record = self.get(path)
        if record is None:
            return None
        if not record.archived:
            if record.frame_key is not None:
                self._frame.remove(record.frame_key, path)
            self._content.remove(record.content_hash, path)
            self._lexical.remove(PATH_IDS.intern(path), term_frequencies(record))
        for link in record.links:
            self._inbound.remove(link.href, path)
        for entity in record.entities:
            self._entity.remove(entity, path)
        self._records[path] = _REMOVED
        return record

    def insert(self, record: MemoryRecord) -> None:
        """Put ``record`` at its path, replacing what was there. An archived record enters only
        ``records``, ``inbound`` and ``by_entity``."""
        path = record.path
        previous = self.get(path)
        if previous is record:
            return
        ident = PATH_IDS.intern(path)
        both_active = previous is not None and not previous.archived and not record.archived
        if both_active:
            # Re-index only the tokens whose count changed (none for a head-only edit), so
            # every other bucket stays the parent's object.
            self._remove_except_lexical(previous)  # type: ignore[arg-type]
            self._lexical.replace(
                ident,
                term_frequencies(previous),  # type: ignore[arg-type]
                term_frequencies(record),
            )
        else:
            self.remove(path)
        if not record.archived:
            if record.frame_key is not None:
                self._frame.add(record.frame_key, path)
            self._content.add(record.content_hash, path)
            if not both_active:
                self._lexical.add_tokens(ident, tokenize(indexed_text(record)))
        for link in record.links:
            self._inbound.add(link.href, path)
        for entity in record.entities:
            self._entity.add(entity, path)
        self._records[path] = record

    def insert_coded(self, records: Sequence[MemoryRecord], tokens: CodedTokens) -> None:
        """``insert`` each record in order, given the active ones' tokens already coded
        (:func:`headd.head.lexical.code_tokens` over ``tokenize(indexed_text(record))`` of every
        record not archived, in order), as a parallel load's workers produce them.

        The result is exactly the per-record ``insert``'s; where the coded shortcut does not
        apply (a path already held, the builder past its bulk phase) it is what runs.
        """
        paths = {record.path for record in records}
        fresh = (
            self._lexical.bulk
            and len(paths) == len(records)
            and all(self.get(path) is None for path in paths)
        )
        if not fresh:
            for record in records:
                self.insert(record)
            return
        idents: list[int] = []
        for record in records:
            path = record.path
            ident = PATH_IDS.intern(path)
            if not record.archived:
                if record.frame_key is not None:
                    self._frame.add(record.frame_key, path)
                self._content.add(record.content_hash, path)
                idents.append(ident)
            for link in record.links:
                self._inbound.add(link.href, path)
            for entity in record.entities:
                self._entity.add(entity, path)
            self._records[path] = record
        self._lexical.add_coded(idents, tokens)

    def _remove_except_lexical(self, record: MemoryRecord) -> None:
        path = record.path
        if record.frame_key is not None:
            self._frame.remove(record.frame_key, path)
        self._content.remove(record.content_hash, path)
        for link in record.links:
            self._inbound.remove(link.href, path)
        for entity in record.entities:
            self._entity.remove(entity, path)
        self._records[path] = _REMOVED

    def freeze(self) -> Indexes:
        base = self._base
        holders: dict[str, object] = {
            content_hash: min(paths, key=_tree_order) if paths else _REMOVED
            for content_hash, paths in self._content.touched().items()
        }
        return Indexes(
            records=_apply_changes(base.records, self._records),
            by_content_hash=_apply_changes(base.by_content_hash, holders),
            content_paths=self._content.freeze(),
            by_frame_key=self._frame.freeze(),
            inbound=self._inbound.freeze(),
            by_entity=self._entity.freeze(),
            lexical=self._lexical.freeze(),
        )


def _apply_changes(base: PMap[str, Any], changes: dict[str, object]) -> PMap[str, Any]:
    if not changes:
        return base
    if not base:
        return pmap({key: value for key, value in changes.items() if value is not _REMOVED})
    evolver = base.evolver()
    for key, value in changes.items():
        if value is _REMOVED:
            if key in base:
                evolver.remove(key)
        elif base.get(key) is not value:
            evolver.set(key, value)
    return evolver.persistent()


def insert_record(indexes: Indexes, record: MemoryRecord) -> Indexes:
    builder = IndexesBuilder(indexes)
    builder.insert(record)
    return builder.freeze()


def remove_record(indexes: Indexes, path: str) -> Indexes:
    """Drop the record at ``path`` from every index. A path with no record is a no-op."""
    if path not in indexes.records:
        return indexes
    builder = IndexesBuilder(indexes)
    builder.remove(path)
    return builder.freeze()


def indexes_from_records(records: Iterable[MemoryRecord]) -> Indexes:
    """The fold of ``insert_record`` over ``records`` in order, from empty."""
    builder = IndexesBuilder()
    for record in records:
        builder.insert(record)
    return builder.freeze()


@runtime_checkable
class HeadView(Protocol):
    """The read surface every version and overlay offers (and a caller's own view may)."""

    @property
    def sha(self) -> str | None: ...

    @property
    def size(self) -> int: ...

    def record(self, path: str) -> MemoryRecord | None: ...

    def records(self) -> Iterable[MemoryRecord]: ...

    def paths(self) -> Iterable[str]: ...


#: The pending texts of a view that has none (every version built from a commit).
NO_TEXTS: Final[Mapping[str, str]] = MappingProxyType({})


class IndexedView:
    """The read surface over one :class:`Indexes` value and a sha.

    ``pending_texts`` maps a blob id to the file text of a record an overlay parsed from a
    session's op, which git does not hold yet (``headd.head.texts``); a version built from a
    commit has none.
    """

    __slots__ = ("_sha", "indexes", "pending_texts")

    indexes: Indexes
    _sha: str | None
    pending_texts: Mapping[str, str]

    def __init__(
        self, indexes: Indexes, sha: str | None, pending_texts: Mapping[str, str] = NO_TEXTS
    ) -> None:
        object.__setattr__(self, "indexes", indexes)
        object.__setattr__(self, "_sha", sha)
        object.__setattr__(self, "pending_texts", pending_texts)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def sha(self) -> str | None:
        return self._sha

    @property
    def lexical(self) -> LexicalIndex:
        return self.indexes.lexical

    @property
    def size(self) -> int:
        return len(self.indexes.records)

    def record(self, path: str) -> MemoryRecord | None:
        return self.indexes.records.get(path)

    get = record

    def __contains__(self, path: object) -> bool:
        return path in self.indexes.records

    def records(self) -> Iterator[MemoryRecord]:
        return iter(self.indexes.records.values())

    def paths(self) -> Iterator[str]:
        return iter(self.indexes.records.keys())

    def by_content_hash(self, content_hash: str) -> str | None:
        """The active path holding this content hash, if any."""
        return self.indexes.by_content_hash.get(content_hash)

    def by_frame_key(self, key: str) -> list[str]:
        """Active paths whose claim shares this frame key, sorted ascending."""
        return utf16_sorted(self.indexes.by_frame_key.get(key, ()))

    def inbound(self, href: str) -> list[str]:
        """Paths whose head links point at ``href`` (as authored), sorted ascending."""
        return utf16_sorted(self.indexes.inbound.get(href, ()))

    def by_entity(self, entity: str) -> list[str]:
        """Paths naming ``entity`` (``type:name`` as authored), sorted ascending."""
        return utf16_sorted(self.indexes.by_entity.get(entity, ()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sha={self._sha!r}, size={self.size})"


def view_of(indexes: Indexes, sha: str | None) -> IndexedView:
    return IndexedView(indexes, sha)


def indexes_of(view: HeadView | IndexedView) -> Indexes:
    """The indexes behind any view: its own when built here, else rebuilt from its records."""
    if isinstance(view, IndexedView):
        return view.indexes
    return indexes_from_records(view.records())
