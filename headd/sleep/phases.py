"""The deterministic sleep phases, each a pure function of the working copy and the run's context.

Each returns a ``Change`` (files written, paths removed, counts, touched memories) and never
reads the clock or the disk: the run date, the usage rows and the vectors come in ``Context``.
Every eviction is an archive move (``archive/<YYYY>/<path>`` plus the three stamps), never a
delete, and no phase archives, folds or moves an arc or a task. The rules and where they depart
from memhtml are in docs/design/sleep.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import numpy as np

from headd.head.negation import negation_divergent
from headd.memfile.archive import (
    archive_path,
    archive_stamps,
    href_of,
    original_path,
    supersede_stamps,
)
from headd.memfile.head_edit import add_link, remove_link, set_meta
from headd.memfile.placement import slugify
from headd.memfile.render import format_confidence, format_instant, format_integer
from headd.memfile.sidecar import (
    STATE_SIDECAR_PATH,
    SidecarEntry,
    merge_entries,
    parse_sidecar,
    render_sidecar,
)
from headd.record import MemoryRecord
from headd.sleep.working import (
    ARCHIVED,
    FOLDED,
    MOVED,
    REPOINTED,
    STAMPED,
    Change,
    Touch,
    Working,
    inbound_index,
)

#: Types no phase scores, folds, moves or archives.
PROTECTED_TYPES = frozenset({"arc", "task"})
#: The evict band of retention triage (memhtml's 0.3).
EVICT_BAND = 0.3
#: A memory younger than this is never evicted by triage: it has not had the chance to be used.
GRACE_DAYS = 30
#: Reprieve: how long a reprieve extends valid-until, the score it needs, how many it may have.
REPRIEVE_DAYS = 14
REPRIEVE_FLOOR = 0.5
MAX_REPRIEVES = 3
#: Confidence decay: after this many days without an update or a use, confidence × factor.
DECAY_AFTER_DAYS = 180
DECAY_FACTOR = 0.9
DECAY_FLOOR = 0.1
#: Near-duplicates: the cosine at which two claims are one memory (guards permitting).
NEAR_DUPLICATE_COSINE = 0.95
#: Relationship mining: the cosine at which two memories get a derived ``relates_to``.
RELATED_COSINE = 0.8
#: Placement triage moves at most this many inbox records per run.
PLACEMENT_QUOTA = 200
INBOX = "areas/inbox/"

SIGNAL_NAMES = (
    "recency",
    "access",
    "confidence",
    "pagerank",
    "bridge",
    "reinforcement",
    "density",
    "contested",
)
#: Per-type weights of the eight signals (contested subtracts). Semantic and procedural facts
#: lean on confidence and the graph; episodes on recency; preferences on use.
_DEFAULT_WEIGHTS = (0.25, 0.2, 0.2, 0.1, 0.05, 0.1, 0.1, 0.2)
TYPE_WEIGHTS: Mapping[str, tuple[float, ...]] = {
    "episodic": (0.35, 0.2, 0.1, 0.1, 0.05, 0.1, 0.1, 0.2),
    "semantic": (0.2, 0.2, 0.25, 0.1, 0.05, 0.1, 0.1, 0.2),
    "procedural": (0.15, 0.25, 0.25, 0.1, 0.05, 0.1, 0.1, 0.2),
    "user_preference": (0.15, 0.3, 0.2, 0.05, 0.05, 0.15, 0.1, 0.2),
}


@dataclass(frozen=True)
class Context:
    """What a run knows besides the tree: its date, usage rows and (optionally) vectors."""

    date: date
    run_id: str
    usage: Mapping[str, SidecarEntry] = field(default_factory=dict)
    #: Usage rows of the live state plane, exported by ``state-export`` (None: nothing to export).
    live_usage: Sequence[SidecarEntry] | None = None
    #: Unit vectors by path, when the embedder is on; None turns the vector rules off.
    vectors: Mapping[str, np.ndarray] | None = None

    @property
    def now(self) -> datetime:
        """The run's instant: noon UTC of its date (stamps are the same for any rerun)."""
        return datetime(self.date.year, self.date.month, self.date.day, 12, tzinfo=UTC)


def _day(stamp: str | None) -> date | None:
    if not stamp:
        return None
    try:
        return date.fromisoformat(stamp[:10])
    except ValueError:
        return None


def _curatable(record: MemoryRecord) -> bool:
    return not record.archived and record.memory_type not in PROTECTED_TYPES


def _last_use(record: MemoryRecord, ctx: Context) -> date | None:
    row = ctx.usage.get(record.path)
    days = [_day(record.updated_at), _day(record.created_at)]
    if row is not None:
        days += [_day(row.lastAccessedAt), _day(row.lastReinforcedAt)]
    known = [d for d in days if d is not None]
    return max(known) if known else None


def _days_since(day: date | None, ctx: Context) -> float:
    return 3650.0 if day is None else max(0.0, float((ctx.date - day).days))


def free_archive_path(path: str, year: int, taken: Callable[[str], bool]) -> str:
    """The archive path, or with ``-2``, ``-3``… before ``.html`` when that one is taken."""
    target = archive_path(path, year)
    stem = target[: -len(".html")] if target.endswith(".html") else target
    ordinal = 2
    while taken(target):
        target = f"{stem}-{ordinal}.html"
        ordinal += 1
    return target


def _evict(working: Working, change: Change, record: MemoryRecord, ctx: Context) -> str:
    """Archive ``record`` into ``change`` (move plus stamps); its archive path."""
    to = free_archive_path(record.path, ctx.date.year, lambda p: p in working or p in change.writes)
    change.move(record.path, to, archive_stamps(working.text(record.path), ctx.now))
    change.touches.append(Touch(record.path, ARCHIVED, to=to))
    return to


# -- preflight ---------------------------------------------------------------------------------


def preflight(working: Working, ctx: Context) -> Change:
    """Counts what the run starts from; commits nothing (the run reads a commit, not a work tree,
    so there is no uncommitted edit to refuse)."""
    active = working.active()
    return Change(
        counts={
            "active": len(active),
            "inbox": sum(1 for r in active if r.path.startswith(INBOX)),
            "archived": sum(1 for r in working.records() if r.archived),
        }
    )


# -- dedup-merge -------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


#: Rows of the similarity matrix computed at once (a block of 512 rows of 10,000 is 20 MB).
SIMILARITY_BLOCK = 512


def similar_pairs(matrix: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """Every pair ``i < j`` of unit rows whose cosine reaches ``threshold``, in row order,
    computed a block of rows at a time so the whole n×n matrix never exists."""
    out: list[tuple[int, int, float]] = []
    for start in range(0, len(matrix), SIMILARITY_BLOCK):
        block = matrix[start : start + SIMILARITY_BLOCK] @ matrix.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if start + r < c:
                out.append((start + r, c, float(block[r, c])))
    return out


def numbers_of(text: str) -> tuple[str, ...]:
    return tuple(sorted(_NUMBER.findall(text)))


def may_fold(a: MemoryRecord, b: MemoryRecord) -> bool:
    """The guards of a near-duplicate fold: never a claim and its negation, never a changed
    number, never across types."""
    return (
        a.memory_type == b.memory_type
        and not negation_divergent(a.claim, b.claim)
        and numbers_of(a.claim) == numbers_of(b.claim)
    )


def _keeper_order(record: MemoryRecord) -> tuple[str, str]:
    """The oldest memory of a group keeps its path (links and habits point at it)."""
    return (record.created_at or "9999", record.path)


def _groups(working: Working, ctx: Context) -> list[list[MemoryRecord]]:
    candidates = [r for r in working.active() if _curatable(r)]
    by_hash: dict[str, list[MemoryRecord]] = {}
    for record in candidates:
        by_hash.setdefault(record.content_hash, []).append(record)
    parent = {r.path: r.path for r in candidates}

    def find(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    for group in by_hash.values():
        for other in group[1:]:
            parent[find(other.path)] = find(group[0].path)
    if ctx.vectors is not None:
        held = [r for r in candidates if r.path in ctx.vectors]
        if len(held) > 1:
            matrix = np.stack([ctx.vectors[r.path] for r in held])
            for i, j, _ in similar_pairs(matrix, NEAR_DUPLICATE_COSINE):
                if may_fold(held[i], held[j]):
                    parent[find(held[j].path)] = find(held[i].path)
    grouped: dict[str, list[MemoryRecord]] = {}
    for record in candidates:
        grouped.setdefault(find(record.path), []).append(record)
    return [sorted(g, key=_keeper_order) for g in grouped.values() if len(g) > 1]


def dedup_merge(working: Working, ctx: Context) -> Change:
    """Content duplicates (and near-duplicates by cosine, under the guards) fold into the oldest
    of their group: it gains a ``supersedes`` link to each other's archive path, and each other
    is archived with ``superseded-by`` the keeper."""
    change = Change()
    groups = _groups(working, ctx)
    for group in groups:
        keeper, *rest = group
        keeper_html = working.text(keeper.path)
        for loser in rest:
            to = free_archive_path(
                loser.path, ctx.date.year, lambda p: p in working or p in change.writes
            )
            moment = format_instant(ctx.now)
            stamped = supersede_stamps(
                working.text(loser.path), new_path=keeper.path, moment=moment, now=ctx.now
            )
            change.move(loser.path, to, stamped)
            keeper_html = add_link(keeper_html, "supersedes", href_of(to))
            change.touches.append(Touch(loser.path, FOLDED, to=to, into=keeper.path))
        change.writes[keeper.path] = keeper_html
        change.touches.append(Touch(keeper.path, STAMPED))
    change.counts = {"groups": len(groups), "folded": sum(len(g) - 1 for g in groups)}
    return change


# -- relationship-mining -----------------------------------------------------------------------


def relationship_mining(working: Working, ctx: Context) -> Change:
    """Counts the derived ``relates_to`` pairs (cosine ≥ RELATED_COSINE); derived edges are a
    function of the corpus and the embedder, never committed."""
    if ctx.vectors is None:
        return Change(counts={"pairs": 0, "vectors": 0})
    held = [r for r in working.active() if r.path in ctx.vectors]
    if len(held) < 2:
        return Change(counts={"pairs": 0, "vectors": len(held)})
    matrix = np.stack([ctx.vectors[r.path] for r in held])
    change = Change()
    change.edges = [
        (held[i].path, held[j].path, round(sim, 4))
        for i, j, sim in similar_pairs(matrix, RELATED_COSINE)
    ]
    change.counts = {"pairs": len(change.edges), "vectors": len(held)}
    return change


# -- confidence-decay --------------------------------------------------------------------------


def confidence_decay(working: Working, ctx: Context) -> Change:
    """A memory neither updated nor used for DECAY_AFTER_DAYS loses a tenth of its confidence
    (to a floor) each run. ``memhtml-updated`` is left alone: stamping it would make the memory
    look fresh to retention triage, which reads the same staleness."""
    change = Change()
    for record in working.active():
        if not _curatable(record):
            continue
        if _days_since(_last_use(record, ctx), ctx) < DECAY_AFTER_DAYS:
            continue
        decayed = max(DECAY_FLOOR, record.confidence * DECAY_FACTOR)
        if format_confidence(decayed) == format_confidence(record.confidence):
            continue
        html = working.text(record.path)
        change.writes[record.path] = set_meta(
            html, "memhtml-confidence", format_confidence(decayed)
        )
        change.touches.append(Touch(record.path, STAMPED))
    change.counts = {"decayed": len(change.writes)}
    return change


# -- retention-triage --------------------------------------------------------------------------


def _pagerank(records: Sequence[MemoryRecord], rounds: int = 20) -> dict[str, float]:
    """PageRank over authored links between active memories, as a multiple of the uniform rank
    divided by four (so an unlinked store scores 0.25 each and a hub saturates at 1)."""
    index = {r.path: i for i, r in enumerate(records)}
    n = len(records)
    if n == 0:
        return {}
    out_links: list[list[int]] = [[] for _ in range(n)]
    for i, record in enumerate(records):
        for link in record.links:
            j = index.get(link.href.lstrip("/"))
            if j is not None and j != i:
                out_links[i].append(j)
    rank = np.full(n, 1.0 / n)
    for _ in range(rounds):
        nxt = np.full(n, 0.15 / n)
        for i, targets in enumerate(out_links):
            if targets:
                nxt[targets] += 0.85 * rank[i] / len(targets)
            else:
                nxt += 0.85 * rank[i] / n
        rank = nxt
    return {r.path: min(1.0, float(rank[i]) * n / 4.0) for i, r in enumerate(records)}


def signals(
    record: MemoryRecord,
    ctx: Context,
    pagerank: Mapping[str, float],
    inbound: Mapping[str, list[tuple[str, str]]],
) -> tuple[float, ...]:
    """The eight signals of SIGNAL_NAMES, each in [0, 1]."""
    row = ctx.usage.get(record.path)
    accesses = float(row.accessCount) if row is not None else 0.0
    reinforced = float(row.reinforcementCount) if row is not None else 0.0
    neighbours = {src for src, _ in inbound.get(record.path, [])}
    neighbours |= {link.href.lstrip("/") for link in record.links}
    dirs = {p.rsplit("/", 1)[0] for p in neighbours}
    contested = any(rel == "contradicts" for _, rel in inbound.get(record.path, [])) or any(
        link.rel == "contradicts" for link in record.links
    )
    return (
        math.exp(-_days_since(_last_use(record, ctx), ctx) / 90.0),
        min(1.0, math.log1p(accesses) / math.log1p(20)),
        max(0.0, min(1.0, record.confidence)),
        pagerank.get(record.path, 0.0),
        min(1.0, len(dirs) / 3.0),
        min(1.0, math.log1p(reinforced) / math.log1p(10)),
        min(1.0, record.word_count / 80.0),
        1.0 if contested else 0.0,
    )


def retention_score(record: MemoryRecord, values: Sequence[float]) -> float:
    weights = TYPE_WEIGHTS.get(record.memory_type, _DEFAULT_WEIGHTS)
    positive = sum(w * v for w, v in zip(weights[:-1], values[:-1], strict=True))
    return positive - weights[-1] * values[-1]


def retention_triage(working: Working, ctx: Context) -> Change:
    """Scores every curatable memory past its grace period on the eight signals; a score in the
    evict band (≤ EVICT_BAND) is archived. Never an arc, a task or a person's page."""
    change = Change()
    active = working.active()
    pagerank = _pagerank(active)
    inbound = inbound_index(active)
    scored = 0
    for record in active:
        if not _curatable(record) or record.path.startswith("resources/people/"):
            continue
        if _days_since(_day(record.created_at), ctx) < GRACE_DAYS:
            continue
        scored += 1
        if retention_score(record, signals(record, ctx, pagerank, inbound)) <= EVICT_BAND:
            _evict(working, change, record, ctx)
    change.counts = {"scored": scored, "evicted": len(change.touches)}
    return change


# -- reprieve ----------------------------------------------------------------------------------


def reprieve_score(record: MemoryRecord, ctx: Context) -> float:
    """Importance, access, outcome and recency of use, summed (memhtml's four terms)."""
    row = ctx.usage.get(record.path)
    accesses = float(row.accessCount) if row is not None else 0.0
    outcome = max(0.0, float(row.outcomeScore)) if row is not None else 0.0
    used = _day(row.lastAccessedAt) if row is not None else None
    recency = math.exp(-_days_since(used, ctx) / 30.0) if used is not None else 0.0
    return (
        0.4 * record.importance / 10.0
        + 0.3 * min(1.0, math.log1p(accesses) / math.log1p(20))
        + 0.2 * min(1.0, outcome)
        + 0.1 * recency
    )


def reprieve(working: Working, ctx: Context) -> Change:
    """A memory past its ``valid-until``: reprieved 14 days (and counted) when its score reaches
    the floor and it has had fewer than three reprieves, else archived."""
    change = Change()
    reprieved = 0
    for record in working.active():
        if not _curatable(record):
            continue
        until = _day(record.valid_until)
        if until is None or until >= ctx.date:
            continue
        if reprieve_score(record, ctx) >= REPRIEVE_FLOOR and record.reprieves < MAX_REPRIEVES:
            extended = (ctx.date + timedelta(days=REPRIEVE_DAYS)).isoformat()
            html = set_meta(working.text(record.path), "memhtml-valid-until", extended)
            html = set_meta(html, "memhtml-reprieves", format_integer(record.reprieves + 1))
            change.writes[record.path] = set_meta(html, "memhtml-updated", format_instant(ctx.now))
            change.touches.append(Touch(record.path, STAMPED))
            reprieved += 1
        else:
            _evict(working, change, record, ctx)
    change.counts = {"reprieved": reprieved, "evicted": len(change.touches) - reprieved}
    return change


# -- placement-triage --------------------------------------------------------------------------


def _names(record: MemoryRecord) -> list[str]:
    """Entity names then tags, slugged, in the record's order (the candidate directory names)."""
    out = []
    for value in [e.split(":", 1)[-1] for e in record.entities] + list(record.tags):
        slug = slugify(value)
        if slug and slug not in out:
            out.append(slug)
    return out


@dataclass
class Homes:
    """What ``home_for`` consults, built once per phase (settled directories by their last
    segment, the directories of settled memories per entity, inbox memories per entity)."""

    by_name: dict[str, str]
    by_entity: dict[str, dict[str, int]]
    inbox_entities: dict[str, int]

    @classmethod
    def of(cls, active: Sequence[MemoryRecord]) -> Homes:
        by_name: dict[str, str] = {}
        by_entity: dict[str, dict[str, int]] = {}
        inbox_entities: dict[str, int] = {}
        for record in active:
            if record.path.startswith(INBOX):
                for entity in record.entities:
                    inbox_entities[entity] = inbox_entities.get(entity, 0) + 1
                continue
            directory = record.path.rsplit("/", 1)[0]
            if not directory.startswith("resources/people"):
                by_name.setdefault(directory.rsplit("/", 1)[-1], directory)
            if record.memory_type in PROTECTED_TYPES:
                continue
            for entity in record.entities:
                dirs = by_entity.setdefault(entity, {})
                dirs[directory] = dirs.get(directory, 0) + 1
        return cls(by_name, by_entity, inbox_entities)


def home_for(record: MemoryRecord, homes: Homes) -> str | None:
    """Where an inbox record belongs: an existing directory named by one of its entities or tags,
    else the directory holding the most settled memories that share an entity with it, else a
    new ``resources/<entity>/`` when another inbox memory shares that entity; None to stay."""
    for name in _names(record):
        if name in homes.by_name:
            return homes.by_name[name]
    shared: dict[str, int] = {}
    for entity in record.entities:
        for directory, count in homes.by_entity.get(entity, {}).items():
            shared[directory] = shared.get(directory, 0) + count
    if shared:
        return min(shared, key=lambda d: (-shared[d], d))
    for entity in record.entities:
        slug = slugify(entity.split(":", 1)[-1])
        if homes.inbox_entities.get(entity, 0) > 1 and slug and not entity.startswith("person:"):
            return f"resources/{slug}"
    return None


def placement_triage(working: Working, ctx: Context) -> Change:
    """Inbox memories moved to a home (``home_for``), at most PLACEMENT_QUOTA a run; every link
    into a moved memory is repointed in the same commit."""
    change = Change()
    active = working.active()
    homes = Homes.of(active)
    moves: dict[str, str] = {}
    for record in active:
        if len(moves) >= PLACEMENT_QUOTA:
            break
        rest = record.path[len(INBOX) :] if record.path.startswith(INBOX) else None
        if rest is None or "/" in rest or not _curatable(record):
            continue
        home = home_for(record, homes)
        if home is None:
            continue
        stem = rest[: -len(".html")]
        target, ordinal = f"{home}/{rest}", 2
        while target in working or target in change.writes:
            target = f"{home}/{stem}-{ordinal}.html"
            ordinal += 1
        moves[record.path] = target
        change.move(record.path, target, working.text(record.path))
        change.touches.append(Touch(record.path, MOVED, to=target))
    _repoint(working, change, moves)
    change.counts = {"moved": len(moves), "repointed": _count(change, REPOINTED)}
    return change


def _count(change: Change, kind: str) -> int:
    return sum(1 for t in change.touches if t.kind == kind)


def _repoint(working: Working, change: Change, moves: Mapping[str, str]) -> None:
    """Rewrite every link into a moved path to its new path (in the moved file too)."""
    if not moves:
        return
    inbound = inbound_index(working.records())
    sources: set[str] = set()
    for old in moves:
        sources |= {src for src, _ in inbound.get(old, [])}
    for src in sorted(sources):
        new_src = moves.get(src, src)
        html = change.writes.get(new_src) or working.text(src)
        record = working.record(src)
        assert record is not None
        for link in record.links:
            target = link.href.lstrip("/")
            if target in moves:
                html = remove_link(html, link.rel, link.href)
                html = add_link(html, link.rel, href_of(moves[target]))
        change.writes[new_src] = html
        change.touches.append(Touch(src, REPOINTED))


# -- integrity ---------------------------------------------------------------------------------


def _archived_copies(working: Working) -> dict[str, str]:
    """Original path → the newest ``archive/<YYYY>/<path>`` held (the archive path algebra)."""
    out: dict[str, str] = {}
    for record in working.records():
        origin = original_path(record.path) if record.archived else None
        if origin is not None and record.path > out.get(origin, ""):
            out[origin] = record.path
    return out


def integrity(working: Working, ctx: Context) -> Change:
    """Dangling hrefs between memories are repaired by the archive path algebra (the target's
    archived copy), or counted as unrepaired when nothing holds them."""
    change = Change()
    unrepaired = 0
    copies = _archived_copies(working)
    for record in working.active():
        html: str | None = None
        for link in record.links:
            target = link.href.lstrip("/")
            if not target.endswith(".html") or target in working:
                continue
            moved = copies.get(target)
            if moved is None:
                unrepaired += 1
                continue
            html = remove_link(html or working.text(record.path), link.rel, link.href)
            html = add_link(html, link.rel, href_of(moved))
        if html is not None:
            change.writes[record.path] = html
            change.touches.append(Touch(record.path, REPOINTED))
    change.counts = {"repaired": len(change.writes), "unrepaired": unrepaired}
    return change


# -- state-export ------------------------------------------------------------------------------


def state_export(working: Working, ctx: Context) -> Change:
    """The live usage rows merged into the committed sidecar, written when the bytes change."""
    if ctx.live_usage is None:
        return Change(counts={"rows": len(ctx.usage), "written": 0})
    on_tree = working.others.get(STATE_SIDECAR_PATH, "")
    text = render_sidecar(merge_entries(parse_sidecar(on_tree).entries, ctx.live_usage))
    change = Change(counts={"rows": text.count("\n"), "written": int(text != on_tree)})
    if text != on_tree:
        change.writes[STATE_SIDECAR_PATH] = text
    return change


def report(working: Working, ctx: Context) -> Change:
    active = working.active()
    return Change(
        counts={
            "active": len(active),
            "inbox": sum(1 for r in active if r.path.startswith(INBOX)),
        }
    )


PhaseFn = Callable[[Working, Context], Change]

DETERMINISTIC: Mapping[str, PhaseFn] = {
    "preflight": preflight,
    "dedup-merge": dedup_merge,
    "relationship-mining": relationship_mining,
    "confidence-decay": confidence_decay,
    "retention-triage": retention_triage,
    "reprieve": reprieve,
    "placement-triage": placement_triage,
    "integrity": integrity,
    "state-export": state_export,
    "report": report,
}
