"""The retention gate: does the landed version still find, by the BASE's own words, what the base
found — wherever curation put it?

The head gate (``headd.head.gate``) probes records active in both versions by the landed
record's title, so a landing that rewrites titles, or archives or moves the memories that matter,
leaves it nothing to fail on. This gate samples memories active at the base, queries each with
the base record's title (else its claim's first sentence), follows it to where it lives on the
landed side — the same path, moved (same content hash), folded (archived, then ``supersedes``
forward to a live memory), or evicted — and ranks the followed target. It passes when the landed
MRR reaches the same floor as the head gate's (base MRR minus the tolerance), the landed side has
no more fell-out inversions than the base, every eviction is one the landing declared, and no
memory used recently enough is evicted. Pure: a function of the two views and the options.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import date
from typing import Final

import msgspec

from headd.head.gate import _order_key, probe_query_for, round4
from headd.head.ids import utf16_key
from headd.head.indexes import IndexedView
from headd.head.search import SEED_EXACT, search_head
from headd.head.successors import MAX_STEPS, successor

RETENTION_PROBES: Final = 200
#: A memory read at least this often, last within USED_WITHIN_DAYS, is never evicted.
USED_ACCESS_FLOOR: Final = 3
USED_WITHIN_DAYS: Final = 30

SAME = "same"
MOVED = "moved"
FOLDED = "folded"
EVICTED = "evicted"


class Followed(msgspec.Struct, frozen=True):
    """Where a base memory lives on the landed side; ``target`` None when it was evicted."""

    how: str
    target: str | None
    archived_to: str | None = None


class RetentionProbe(msgspec.Struct, frozen=True):
    path: str
    query: str
    how: str
    target: str | None
    rank_before: int | None
    rank_after: int | None


class RetentionGateReport(msgspec.Struct, frozen=True):
    mode: str
    base: str | None
    landed: str | None
    probes: int
    k: int
    seed: int
    tolerance: float
    mrr_before: float
    mrr: float
    floor: float
    inversions_before: int
    inversions: int
    #: Probes that ranked in the base's top k and not at the landed side.
    fell: tuple[RetentionProbe, ...]
    #: Base memories the landing archived without declaring it.
    undeclared_evictions: tuple[str, ...]
    #: Base memories in recent use that the landing archived.
    used_evicted: tuple[str, ...]
    passed: bool
    results: tuple[RetentionProbe, ...]


def _origins(landed: IndexedView) -> dict[str, str]:
    """Original path → the newest archived record holding it on the landed side."""
    out: dict[str, str] = {}
    for record in landed.records():
        origin = record.origin_path
        if record.archived and origin is not None and record.path > out.get(origin, ""):
            out[origin] = record.path
    return out


def follow(
    base: IndexedView, landed: IndexedView, path: str, origins: Mapping[str, str]
) -> Followed:
    """Where the base memory at ``path`` lives on the landed side."""
    held = landed.record(path)
    if held is not None and not held.archived:
        return Followed(SAME, path)
    record = base.record(path)
    if record is not None:
        moved = landed.by_content_hash(record.content_hash)
        moved_record = landed.record(moved) if moved is not None else None
        if moved_record is not None and not moved_record.archived:
            return Followed(MOVED, moved)
    current = origins.get(path)
    if current is None:
        return Followed(EVICTED, None)
    archived_to = current
    seen = {current}
    for _ in range(MAX_STEPS):
        nxt = successor(landed, current)
        if nxt is None or nxt in seen:
            break
        seen.add(nxt)
        current = nxt
        found = landed.record(current)
        if found is not None and not found.archived:
            return Followed(FOLDED, current, archived_to)
    return Followed(EVICTED, None, archived_to)


def _rank(view: IndexedView, query: str, target: str | None, k: int) -> int | None:
    if target is None:
        return None
    hits = search_head(view, query, limit=k, mode=SEED_EXACT)
    for index, hit in enumerate(hits):
        if hit.path == target:
            return index + 1
    return None


def recently_used(usage: Mapping[str, object], path: str, today: date) -> bool:
    row = usage.get(path)
    if row is None:
        return False
    count = float(getattr(row, "accessCount", 0) or 0)
    last = getattr(row, "lastAccessedAt", None)
    if count < USED_ACCESS_FLOOR or not last:
        return False
    try:
        day = date.fromisoformat(str(last)[:10])
    except ValueError:
        return False
    return (today - day).days <= USED_WITHIN_DAYS


def gate_retention(
    base: IndexedView,
    landed: IndexedView,
    *,
    declared: Collection[str],
    usage: Mapping[str, object],
    today: date,
    probes: int = RETENTION_PROBES,
    k: int = 10,
    tolerance: float = 0.02,
    seed: int = 1,
) -> RetentionGateReport:
    """Run the retention gate; ``declared`` are the base paths the landing says it archives."""
    origins = _origins(landed)
    base_active = sorted(
        (r for r in base.indexes.active if r.memory_type != "task"),
        key=lambda r: (_order_key(seed, r.path), utf16_key(r.path)),
    )
    undeclared: list[str] = []
    used: list[str] = []
    followed: dict[str, Followed] = {}
    for record in base.indexes.active:
        where = follow(base, landed, record.path, origins)
        followed[record.path] = where
        if where.how == EVICTED:  # a fold keeps the fact in its successor: not an eviction
            if record.path not in declared:
                undeclared.append(record.path)
            if recently_used(usage, record.path, today):
                used.append(record.path)
    results = []
    for record in base_active[: max(0, probes)]:
        where = followed[record.path]
        if where.how == EVICTED and record.path in declared:
            continue  # a declared eviction is judged by the usage rule, not by rank
        query = probe_query_for(record)
        results.append(
            RetentionProbe(
                record.path,
                query,
                where.how,
                where.target,
                _rank(base, query, record.path, k),
                _rank(landed, query, where.target, k),
            )
        )
    before = [r.rank_before for r in results]
    after = [r.rank_after for r in results]
    mrr_before = _mrr(before)
    mrr = _mrr(after)
    floor = round4(max(0.0, mrr_before - tolerance))
    inversions_before = sum(1 for rank in before if rank is None)
    inversions = sum(1 for rank in after if rank is None)
    fell = tuple(r for r in results if r.rank_before is not None and r.rank_after is None)
    return RetentionGateReport(
        mode="retention",
        base=base.sha,
        landed=landed.sha,
        probes=len(results),
        k=k,
        seed=seed,
        tolerance=tolerance,
        mrr_before=mrr_before,
        mrr=mrr,
        floor=floor,
        inversions_before=inversions_before,
        inversions=inversions,
        fell=fell,
        undeclared_evictions=tuple(sorted(undeclared)),
        used_evicted=tuple(sorted(used)),
        passed=(mrr >= floor and inversions <= inversions_before and not undeclared and not used),
        results=tuple(results),
    )


def _mrr(ranks: list[int | None]) -> float:
    if not ranks:
        return 0.0
    return round4(sum(0.0 if r is None else 1 / r for r in ranks) / len(ranks))
