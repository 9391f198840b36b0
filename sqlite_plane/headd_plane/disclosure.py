"""Recall's disclosure fold: ranked candidates into quotes and index lines under a budget. Pure.

Rank order is authoritative: a candidate is never promoted past a better-ranked one. One that
does not fit becomes an index line (path, title, claim) and the fold goes on, so a later, shorter
memory can still be quoted. At most :data:`MAX_PER_ENTITY` full quotes per entity NAME, so
recall is breadth-first over entities; a capped memory still gets its index line. Arcs fold
under their own envelope so one synthesis cannot crowd out the memories behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .chunking import utf16_len

ARC_BODY_BUDGET = 9_000
MEMORY_BODY_BUDGET = 16_000
MAX_PER_ENTITY = 2


@dataclass(frozen=True, slots=True)
class DisclosureCandidate:
    path: str
    title: str
    claim: str
    memory_type: str
    disclosure_text: str
    entity_names: tuple[str, ...] = ()


@dataclass
class DisclosureFold:
    disclosed: list[dict[str, str]] = field(default_factory=list)
    index_lines: list[dict[str, str]] = field(default_factory=list)
    spent_chars: int = 0
    truncated: bool = False


def fold_disclosure(
    candidates: Sequence[DisclosureCandidate],
    budget_chars: int,
    max_per_entity: int = MAX_PER_ENTITY,
) -> DisclosureFold:
    fold = DisclosureFold()
    per_entity: dict[str, int] = {}
    for candidate in candidates:
        line = {
            "path": candidate.path,
            "title": candidate.title,
            "claim": candidate.claim,
            "memory_type": candidate.memory_type,
        }
        names = set(candidate.entity_names)
        capped = any(per_entity.get(name, 0) >= max_per_entity for name in names)
        body = candidate.disclosure_text
        if capped or fold.spent_chars + utf16_len(body) > budget_chars:
            fold.index_lines.append(line)
            continue
        fold.disclosed.append({**line, "body": body})
        fold.spent_chars += utf16_len(body)
        for name in names:
            per_entity[name] = per_entity.get(name, 0) + 1
    fold.truncated = len(fold.index_lines) > 0
    return fold
