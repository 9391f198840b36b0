"""Recall's disclosure fold: ranked candidates into quotes and index lines under a budget. Pure.

Rank order is authoritative: a candidate is never promoted past a better-ranked one. One that
does not fit becomes an index line (path, title, claim) and the fold goes on, so a later, shorter
memory can still be quoted. At most :data:`MAX_PER_ENTITY` full quotes per entity NAME, so
recall is breadth-first over entities; a capped memory still gets its index line. Arcs fold
under their own envelope so one synthesis cannot crowd out the memories behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from headd.wire.plane_answers import RecallEntry, RecallFold, RecallLine

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


#: One envelope folded: its quotes, its index lines, what it spent; the wire's own Struct.
DisclosureFold = RecallFold


def fold_disclosure(
    candidates: Sequence[DisclosureCandidate],
    budget_chars: int,
    max_per_entity: int = MAX_PER_ENTITY,
) -> DisclosureFold:
    fold = DisclosureFold(disclosed=[], index_lines=[], spent_chars=0, truncated=False)
    per_entity: dict[str, int] = {}
    for c in candidates:
        names = set(c.entity_names)
        capped = any(per_entity.get(name, 0) >= max_per_entity for name in names)
        body = c.disclosure_text
        if capped or fold.spent_chars + utf16_len(body) > budget_chars:
            fold.index_lines.append(RecallLine(c.path, c.title, c.claim, c.memory_type))
            continue
        fold.disclosed.append(RecallEntry(c.path, c.title, c.claim, c.memory_type, body))
        fold.spent_chars += utf16_len(body)
        for name in names:
            per_entity[name] = per_entity.get(name, 0) + 1
    fold.truncated = len(fold.index_lines) > 0
    return fold
