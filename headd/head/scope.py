"""Scope: the wire's ``filter`` as a predicate over records (memhtml's ``SearchScope`` semantics).

- ``types``: any of; absent or empty means every type except ``task`` (naming ``task`` opts in).
- ``workspace``: strict equality (a record with no workspace never matches a workspace scope).
- ``tags``: any of (each tag broadens); blank tags are dropped, so they cannot narrow to nothing.
- ``entity``: one ``type:name`` reference, compared with ASCII case folded (as SQLite's
  ``lower()``), against the record's entity rows (head entities, ``concept:`` and ``lang:``).
- ``facets``: ``name=value`` specs, split at the first ``=``, both halves trimmed, a spec with an
  empty half dropped; AND across names, OR within a name, exact text.
- ``include_archived``: archived records are excluded unless asked for.
- ``as_of``: replaces the archived filter with a validity window at that instant, compared as
  strings: ``coalesce(valid_from, event_at, created_at) <= as_of`` and
  ``valid_until`` absent or ``> as_of``; archived records are then included.

The head's search ranks active records only, so for ``search_head`` the archive switches only
narrow; they matter to other readers of the same predicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from headd.record import MemoryRecord
from headd.wire.filter import Filter, parse_facet_filter, parse_facet_filters

__all__ = ["Scope", "ascii_lower", "parse_facet_filter", "parse_facet_filters"]

TASK_TYPE = "task"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """SQLite's ``lower()``: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


def _entity_refs(record: MemoryRecord) -> set[str]:
    if record.entity_rows:
        return {ascii_lower(f"{row.entity_type}:{row.entity_name}") for row in record.entity_rows}
    return {ascii_lower(entity) for entity in record.entities}


@dataclass(frozen=True)
class Scope:
    """A filter every arm receives. Call it (or its ``admit``) on a record."""

    types: tuple[str, ...] = ()
    workspace: str | None = None
    tags: tuple[str, ...] = ()
    entity: str | None = None
    facets: tuple[str, ...] = ()
    include_archived: bool = False
    as_of: str | None = None
    _tags: frozenset[str] = field(init=False, repr=False, compare=False)
    _facets: dict[str, frozenset[str]] = field(init=False, repr=False, compare=False)
    _entity: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tags", frozenset(t.strip() for t in self.tags if t.strip()))
        grouped: dict[str, set[str]] = {}
        for name, value in parse_facet_filters(self.facets):
            grouped.setdefault(name, set()).add(value)
        object.__setattr__(self, "_facets", {k: frozenset(v) for k, v in grouped.items()})
        entity = self.entity.strip() if self.entity is not None else ""
        object.__setattr__(self, "_entity", ascii_lower(entity) if entity else None)

    @classmethod
    def from_filter(cls, parsed: Filter | None) -> Scope:
        """The wire's ``filter`` (``headd.wire.filter``), decoded with its request (where unknown
        keys are refused)."""
        if parsed is None:
            return cls()
        return cls(
            types=tuple(parsed.types or ()),
            workspace=parsed.workspace,
            tags=tuple(parsed.tags or ()),
            entity=parsed.entity,
            facets=tuple(parsed.facets or ()),
            include_archived=parsed.include_archived,
            as_of=parsed.as_of,
        )

    @property
    def reaches_archived(self) -> bool:
        """True when this scope can admit an archived record, so a search must rank them too."""
        return self.include_archived or self.as_of is not None

    def __call__(self, record: MemoryRecord) -> bool:
        return self.admit(record)

    def admit(self, record: MemoryRecord) -> bool:
        if self.as_of is not None:
            start = record.valid_from or record.event_at or record.created_at
            if start is None or start > self.as_of:
                return False
            if record.valid_until is not None and not record.valid_until > self.as_of:
                return False
        elif record.archived and not self.include_archived:
            return False
        if self.types:
            if record.memory_type not in self.types:
                return False
        elif record.memory_type == TASK_TYPE:
            return False
        if self.workspace is not None and record.workspace != self.workspace:
            return False
        if self._tags and self._tags.isdisjoint(record.tags):
            return False
        if self._entity is not None and self._entity not in _entity_refs(record):
            return False
        if self._facets:
            held: dict[str, set[str]] = {}
            for facet in record.facets:
                held.setdefault(facet.name, set()).add(facet.value)
            for name, values in self._facets.items():
                if values.isdisjoint(held.get(name, ())):
                    return False
        return True
