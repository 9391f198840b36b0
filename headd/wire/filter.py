"""The wire's ``filter`` object, parsed once, for both scopes to compile from.

A search or recall may narrow what every arm ranks with ``filter`` (docs/protocol.md, "Methods"):
``{types?, workspace?, tags?, entity?, facets?: ["name=value"], include_archived?, as_of?}``.
This module is its one parse: ``Filter`` is the typed value, decoded with its request (unknown
keys and wrong types are refused with -32602, as for any params), and ``parse_facet_filter`` is
the one rule for a facet spec. The head's predicate
(``headd.head.scope.Scope``) and the SQLite plane's SQL filter (``headd_plane.scope.Scope``)
are both built from a ``Filter``, so the two planes cannot read the same filter differently.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

FACET_SEPARATOR = "="


class Filter(msgspec.Struct, forbid_unknown_fields=True):
    """What every search arm ranks; by default active non-task memories."""

    types: list[str] | None = None
    workspace: str | None = None
    tags: list[str] | None = None
    entity: str | None = None
    facets: list[str] | None = None
    include_archived: bool = False
    as_of: str | None = None


def parse_facet_filter(spec: str) -> tuple[str, str] | None:
    """``name=value`` split at the first ``=``, both halves trimmed; None for a spec with no
    ``=`` or an empty half (such a spec is dropped: it cannot narrow to nothing)."""
    name, separator, value = spec.partition(FACET_SEPARATOR)
    name, value = name.strip(), value.strip()
    if not separator or not name or not value:
        return None
    return name, value


def parse_facet_filters(specs: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """Every parseable spec, in order."""
    return tuple(pair for pair in map(parse_facet_filter, specs) if pair is not None)
