"""A search scope as ONE SQL filter every arm receives, plus the values it binds.

One filter string reaches all four arms, so a scope cannot hold for three arms and leak in the
fourth. Columns are written against the token ``{alias}``, which each arm replaces with the
alias of its own ``files`` row; values bind from ``?5`` on (``?1``..``?4`` belong to the fused
statement). Defaults: active rows only, and no tasks unless ``task`` is named. ``workspace`` is
strict equality, ``tags`` broaden (any of), ``entity`` is one ``type:name`` compared with ASCII
case folded inside SQL, ``facets`` must all hold across names and broaden within one name.
``include_archived`` drops the archived filter; ``as_of`` replaces it with the validity window
at that instant, compared as strings. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from headd.memfile import vocabulary
from headd.wire import filter as wire_filter

MEMORY_TYPES = vocabulary.MEMORY_TYPES
EXCLUDED_BY_DEFAULT = "task"
FIRST_SCOPE_SLOT = 5


@dataclass(frozen=True, slots=True)
class FacetFilter:
    name: str
    value: str


@dataclass(frozen=True)
class Scope:
    memory_types: tuple[str, ...] = ()
    workspace: str | None = None
    tags: tuple[str, ...] = ()
    entity: str | None = None
    facets: tuple[FacetFilter, ...] = ()
    include_archived: bool = False
    as_of: str | None = None

    def narrows(self) -> bool:
        """Did the caller narrow the candidate set? (``include_archived`` widens; not counted.)"""
        return (
            len(self.memory_types) > 0
            or bool(self.workspace)
            or any(t.strip() for t in self.tags)
            or bool(self.entity)
            or any(f.name.strip() and f.value.strip() for f in self.facets)
        )


@dataclass(frozen=True, slots=True)
class AssembledScope:
    file_filter: str
    params: tuple[str, ...] = field(default_factory=tuple)

    def for_alias(self, alias: str) -> str:
        return self.file_filter.replace("{alias}", alias)


def parse_facet_filter(spec: str) -> FacetFilter | None:
    """A facet spec by the wire's one rule (``headd.wire.filter.parse_facet_filter``)."""
    pair = wire_filter.parse_facet_filter(spec)
    return None if pair is None else FacetFilter(*pair)


def parse_facet_filters(specs: Sequence[str]) -> tuple[FacetFilter, ...]:
    return tuple(FacetFilter(*pair) for pair in wire_filter.parse_facet_filters(specs))


def scope_from_filter(parsed: wire_filter.Filter | None) -> Scope:
    """The wire's ``filter`` (``headd.wire.filter``), decoded with its request, as a
    :class:`Scope`."""
    if parsed is None:
        return Scope()
    return Scope(
        memory_types=tuple(parsed.types or ()),
        workspace=parsed.workspace or None,
        tags=tuple(parsed.tags or ()),
        entity=parsed.entity or None,
        facets=parse_facet_filters(parsed.facets or ()),
        include_archived=parsed.include_archived,
        as_of=parsed.as_of or None,
    )


def assemble_scope(scope: Scope | None = None) -> AssembledScope:
    scope = scope or Scope()
    conditions: list[str] = []
    params: list[str] = []

    def slot(value: str) -> str:
        params.append(value)
        return f"?{FIRST_SCOPE_SLOT + len(params) - 1}"

    if scope.as_of:
        conditions.append(
            "coalesce({alias}.valid_from, {alias}.event_at, {alias}.created_at) <= "
            + slot(scope.as_of)
        )
        conditions.append(
            "({alias}.valid_until IS NULL OR {alias}.valid_until > " + slot(scope.as_of) + ")"
        )
    elif not scope.include_archived:
        conditions.append("{alias}.archived = 0")
    types = [t for t in scope.memory_types if t in MEMORY_TYPES]
    if types:
        conditions.append("{alias}.memory_type IN (" + ", ".join(slot(t) for t in types) + ")")
    else:
        conditions.append(f"{{alias}}.memory_type <> '{EXCLUDED_BY_DEFAULT}'")
    if scope.workspace:
        conditions.append("{alias}.workspace = " + slot(scope.workspace))
    tags = [t for t in scope.tags if t.strip() != ""]
    if tags:
        conditions.append(
            "EXISTS (SELECT 1 FROM file_tags ft WHERE ft.path = {alias}.path AND ft.tag IN ("
            + ", ".join(slot(t) for t in tags)
            + "))"
        )
    if scope.entity:
        conditions.append(
            "EXISTS (SELECT 1 FROM file_entities e WHERE e.path = {alias}.path AND "
            "lower(e.entity_type || ':' || e.entity_name) = lower("
            + slot(scope.entity.strip())
            + "))"
        )
    by_name: dict[str, list[str]] = {}
    for facet in scope.facets:
        name, value = facet.name.strip(), facet.value.strip()
        if name == "" or value == "":
            continue
        values = by_name.setdefault(name, [])
        if value not in values:
            values.append(value)
    for name, values in by_name.items():
        bound_name = slot(name)
        bound_values = ", ".join(slot(v) for v in values)
        conditions.append(
            "EXISTS (SELECT 1 FROM file_facets ff WHERE ff.path = {alias}.path AND ff.name = "
            f"{bound_name} AND ff.value IN ({bound_values}))"
        )
    return AssembledScope("".join(f"\n         AND {c}" for c in conditions), tuple(params))
