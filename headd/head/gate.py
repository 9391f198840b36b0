"""The head gate: does the landed version still find what the base version found?

Probes are a seeded sample of the records active in BOTH versions (a record the landing adds or
archives is not probed), each queried by its title (else the first sentence of its claim, else the
claim). ``search_head`` runs in its seed-exact mode at both versions with the same probes, top
``k``, no vectors, so the gate needs no embedder and is a pure function of the two versions and
the options.

Two inversion kinds, counted at both versions: ``fell-out`` (the target is not in the top k) and
``superseded-outranks`` (a record the target supersedes ranks above it, or appears while the
target does not). The gate passes when the landed MRR reaches ``floor = max(0, base MRR -
tolerance)`` and the landed version has no more inversions than the base.

Numbers are memhtml's: MRR and floor rounded to four places, half up (``Math.round``); probes ordered
by the first 8 hex digits of ``sha1("<seed>:<path>")``, then path.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Final

import msgspec

from headd.errors import DiscriminationFailed
from headd.head.ids import utf16_key
from headd.head.indexes import HeadView, IndexedView, indexes_of, view_of
from headd.head.search import SEED_EXACT, search_head
from headd.record import MemoryRecord

HEAD_GATE_PROBES: Final = 200
HEAD_GATE_K: Final = 10
HEAD_GATE_TOLERANCE: Final = 0.02
HEAD_GATE_SEED: Final = 1
#: How many inversions the one-line failure names.
DESCRIBED_INVERSIONS: Final = 5


class HeadGateProbe(msgspec.Struct, frozen=True):
    path: str
    query: str


class FellOut(msgspec.Struct, frozen=True, tag="fell-out", tag_field="kind"):
    path: str
    query: str


class SupersededOutranks(msgspec.Struct, frozen=True, tag="superseded-outranks", tag_field="kind"):
    path: str
    query: str
    #: The superseded record that ranked above its superseder.
    by: str
    #: The target's rank, None when it was not in the top k.
    rank: int | None
    by_rank: int


HeadGateInversion = FellOut | SupersededOutranks


class HeadGateResult(msgspec.Struct, frozen=True):
    path: str
    query: str
    rank_before: int | None
    rank_after: int | None


class HeadGateReport(msgspec.Struct, frozen=True):
    """The report, field for field the contract's section 6 (snake_case)."""

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
    inversions: tuple[HeadGateInversion, ...]
    added: int
    removed: int
    passed: bool
    results: tuple[HeadGateResult, ...]


class Scored(msgspec.Struct, frozen=True):
    ranks: tuple[int | None, ...]
    mrr: float
    inversions: tuple[HeadGateInversion, ...]


def round4(value: float) -> float:
    """``Math.round(value * 10000) / 10000``: four places, halves rounded up."""
    scaled = value * 10_000
    floor = math.floor(scaled)
    return (floor + 1 if scaled - floor >= 0.5 else floor) / 10_000


_FIRST_SENTENCE = re.compile(r"^[\s\S]*?[.!?](?=\s|\Z)")


def probe_query_for(record: MemoryRecord) -> str:
    """The title, else the first sentence of the claim, else the claim."""
    title = record.title.strip()
    if title:
        return title
    claim = record.claim.strip()
    match = _FIRST_SENTENCE.match(claim)
    sentence = match.group(0).strip() if match else ""
    return sentence or claim


def _order_key(seed: int, path: str) -> str:
    return hashlib.sha1(f"{seed}:{path}".encode()).hexdigest()[:8]


def _active_paths(view: IndexedView) -> set[str]:
    return {record.path for record in view.indexes.active}


def probes_for(
    base: IndexedView, landed: IndexedView, *, seed: int, count: int
) -> list[HeadGateProbe]:
    """Records active in both versions, ordered by their seeded digest (then path), first ``count``."""
    base_active = _active_paths(base)
    rows = [
        (_order_key(seed, record.path), utf16_key(record.path), record)
        for record in landed.indexes.active
        if record.path in base_active
    ]
    rows.sort(key=lambda row: (row[0], row[1]))
    return [
        HeadGateProbe(record.path, probe_query_for(record))
        for _, _, record in rows[: max(0, count)]
    ]


def _superseded_by(view: IndexedView, path: str) -> list[str]:
    record = view.record(path)
    if record is None:
        return []
    targets = []
    for link in record.links:
        if link.rel != "supersedes":
            continue
        target = link.href[1:] if link.href.startswith("/") else link.href
        if view.record(target) is not None:
            targets.append(target)
    return targets


def score_probes(view: IndexedView, probes: list[HeadGateProbe], k: int) -> Scored:
    """Every probe's rank in the top ``k`` at one version, the MRR, and the inversions."""
    ranks: list[int | None] = []
    inversions: list[HeadGateInversion] = []
    for probe in probes:
        hits = search_head(view, probe.query, limit=k, mode=SEED_EXACT)
        position = {hit.path: index + 1 for index, hit in enumerate(hits)}
        rank = position.get(probe.path)
        ranks.append(rank)
        if rank is None:
            inversions.append(FellOut(probe.path, probe.query))
        for by in _superseded_by(view, probe.path):
            by_rank = position.get(by)
            if by_rank is not None and (rank is None or by_rank < rank):
                inversions.append(SupersededOutranks(probe.path, probe.query, by, rank, by_rank))
    reciprocal = sum(0.0 if rank is None else 1 / rank for rank in ranks)
    mrr = 0.0 if not ranks else round4(reciprocal / len(ranks))
    return Scored(tuple(ranks), mrr, tuple(inversions))


def gate_heads(
    base: HeadView | IndexedView,
    landed: HeadView | IndexedView,
    *,
    probes: int = HEAD_GATE_PROBES,
    k: int = HEAD_GATE_K,
    tolerance: float = HEAD_GATE_TOLERANCE,
    seed: int = HEAD_GATE_SEED,
) -> HeadGateReport:
    """Run the gate over two versions. Pure; never raises for any pair of views."""
    base_view = base if isinstance(base, IndexedView) else view_of(indexes_of(base), base.sha)
    landed_view = (
        landed if isinstance(landed, IndexedView) else view_of(indexes_of(landed), landed.sha)
    )
    sample = probes_for(base_view, landed_view, seed=seed, count=probes)
    before = score_probes(base_view, sample, k)
    after = score_probes(landed_view, sample, k)
    floor = round4(max(0.0, before.mrr - tolerance))
    base_active = _active_paths(base_view)
    landed_active = _active_paths(landed_view)
    return HeadGateReport(
        mode="head",
        base=base_view.sha,
        landed=landed_view.sha,
        probes=len(sample),
        k=k,
        seed=seed,
        tolerance=tolerance,
        mrr_before=before.mrr,
        mrr=after.mrr,
        floor=floor,
        inversions_before=len(before.inversions),
        inversions=after.inversions,
        added=len(landed_active - base_active),
        removed=len(base_active - landed_active),
        passed=after.mrr >= floor and len(after.inversions) <= len(before.inversions),
        results=tuple(
            HeadGateResult(probe.path, probe.query, rank_before, rank_after)
            for probe, rank_before, rank_after in zip(
                sample, before.ranks, after.ranks, strict=True
            )
        ),
    )


def _number(value: float) -> str:
    """A number as JavaScript's ``String(n)`` prints it for these values (``1`` not ``1.0``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def describe_head_gate_failure(report: HeadGateReport) -> str:
    """The one-line account of a report: probe count, then what failed, or ``passed``."""
    parts: list[str] = []
    if report.mrr < report.floor:
        parts.append(
            f"MRR {_number(report.mrr)} at {report.landed or 'the landed version'} is below the "
            f"floor of {_number(report.floor)} ({_number(report.mrr_before)} at "
            f"{report.base or 'the base'} minus {_number(report.tolerance)})"
        )
    if len(report.inversions) > report.inversions_before:
        named = "; ".join(
            f"{inversion.path} fell out of the top {report.k}"
            if isinstance(inversion, FellOut)
            else f"{inversion.by} outranks {inversion.path}, which supersedes it"
            for inversion in report.inversions[:DESCRIBED_INVERSIONS]
        )
        parts.append(
            f"{len(report.inversions)} inversion(s) against {report.inversions_before} before: "
            f"{named}"
        )
    return f"head gate over {report.probes} probe(s): {'; '.join(parts) or 'passed'}"


def head_gate_failed(report: HeadGateReport) -> DiscriminationFailed:
    """The refusal as the domain error (``ERR_DISCRIMINATION_FAILED``), the report as details."""
    details = msgspec.json.decode(
        msgspec.json.encode(report)
    )  # plain JSON values, lists not tuples
    return DiscriminationFailed(describe_head_gate_failure(report), details)
