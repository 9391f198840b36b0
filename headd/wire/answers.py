"""What each method answers, as msgspec Structs: the other half of ``headd.wire.methods``.

The daemon's handlers return these values and ``json_rpc`` encodes them as they are; a client
decodes a result into the same type (``headd_client.protocol.decode_result``), so both ends read
one description of the wire, and ``docs/protocol.md``'s answer tables are generated from it
(``scripts/gen_protocol.py``) instead of written beside it where they drifted. Field order is the
order the answers always had, so the bytes on the wire are the ones the dict literals made; an
optional part that an answer leaves out is ``UNSET``, never ``null``.

Where a layer already answers with a Struct, that Struct is the answer: the store's session
results (``headd.store.results``), the head gate's report (``headd.head.gate``), a sleep
merge's report with both gates' (``headd.sleep.merge_report``). The SQLite plane's reports
are Structs of the wire, which the plane builds: the fixed-shape ones here (a rebuild, an update, a reinforce, the sidecar's export and
import, a trace scan), its reads in ``headd.wire.plane_answers`` (recall's pack, its search,
the index's status, a transcript session). The parts of ``status`` that describe other
subsystems are Structs of the wire too, which those subsystems build: the embedder's state and
the memory accounting in ``headd.wire.status_parts``, the remote's standing (and ``sync``'s
answer) in ``headd.wire.remote_answers``. Every method answers a Struct, and no answer holds an
untyped part (``tests/test_wire_answers_typed.py``, ``tests/test_wire_status_parts.py``).
Decoding ignores fields it does not know, so a newer daemon's answer still reads.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from headd.memfile.sidecar import RefusedRow
from headd.memfile.vocabulary import MemoryStatus, MemoryType, Para, TaskStatus
from headd.record import Citation, Facet, Link, MemoryRecord
from headd.wire import browse, doctor, plane_answers, publish
from headd.wire.remote_answers import RemoteStatus, SyncAnswer
from headd.wire.status_parts import EmbedderState, MemoryFigures


class WireRecord(msgspec.Struct, kw_only=True):
    """A memory record as the wire carries it: the record's public fields, its body as text.

    ``claim`` is the ``<mark>`` text; entities are ``type:name``; a link's ``rel`` is the bare
    name with underscores (``laterally_related``) and its ``href`` as the file writes it;
    ``archived`` follows the path; an absent value is null and an absent list empty.
    """

    path: str
    blob_sha: str
    content_hash: str
    memory_type: MemoryType
    status: MemoryStatus
    title: str
    claim: str
    body_text: str
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    facets: tuple[Facet, ...] = ()
    citations: tuple[Citation, ...] = ()
    event_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    archived: bool = False
    archived_at: str | None = None
    superseded_by: str | None = None
    frame_key: str | None = None
    workspace: str | None = None
    para: Para | None = None
    origin_path: str | None = None
    importance: int = 5
    confidence: float = 1.0
    author: str = "agent"
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    task_status: TaskStatus | None = None
    due: str | None = None
    warnings: tuple[str, ...] = ()


#: The names of a record's wire fields, in order.
WIRE_RECORD_FIELDS: tuple[str, ...] = WireRecord.__struct_fields__


def wire_record(record: MemoryRecord) -> WireRecord:
    """``record`` as the wire carries it (one attribute read per field; the body inflated)."""
    return WireRecord(**{name: getattr(record, name) for name in WIRE_RECORD_FIELDS})


def wire_record_or_none(record: MemoryRecord | None) -> WireRecord | None:
    return None if record is None else wire_record(record)


# -- the head's reads ----------------------------------------------------------------------


class ReadAnswer(msgspec.Struct):
    """``read``: ``record`` is null when no parsed memory is at the path."""

    sha: str | None
    record: WireRecord | None


class SkippedFile(msgspec.Struct):
    path: str
    reason: str


class SkippedAnswer(msgspec.Struct):
    """``skipped``: the files the head could not parse, by path."""

    sha: str | None
    files: list[SkippedFile]


class ResolveAnswer(msgspec.Struct):
    """``resolve``: archive moves and ``supersedes`` links followed forward to the live memory."""

    sha: str | None
    path: str
    chain: list[str]


class NearMatch(msgspec.Struct):
    """One near duplicate: a stored memory (``path``, its ``claim``) or an earlier text of the
    same call (``batch_index``, its position in ``texts``)."""

    similarity: float
    path: str | None = None
    batch_index: int | None = None
    claim: str | None = None


class NearDuplicatesAnswer(msgspec.Struct):
    """``near_duplicates``: per text its matches; ``degraded`` (every list empty) when no
    embedder runs or the vectors cover too little of the version to say."""

    sha: str | None
    degraded: bool
    matches: list[list[NearMatch]]


class PathsAnswer(msgspec.Struct):
    """``inbound``/``by_entity``/``by_frame_key``/``by_content_hash``: the paths, sorted."""

    sha: str | None
    paths: list[str]


class SearchHit(msgspec.Struct):
    """One hit; ``arms`` are those of ``lexical``, ``vector``, ``recency`` that ranked it, and
    ``record`` is there only when the request asked for ``records``."""

    path: str
    score: float
    title: str
    claim: str
    arms: list[str]
    record: WireRecord | None | UnsetType = UNSET
    #: With ``explain``: the score split by arm (``lexical``, ``vector``), summing to ``score``.
    why: dict[str, float] | UnsetType = UNSET
    #: The share of the query the hit covers, there only when the request set ``relevance_floor``.
    coverage: float | UnsetType = UNSET


class SearchCoverage(msgspec.Struct):
    coverage: float


class SearchAnswer(msgspec.Struct):
    """``search`` over the head; ``degraded`` is true when the vector arm did not run."""

    sha: str | None
    hits: list[SearchHit]
    arms: list[str]
    degraded: bool
    vectors: SearchCoverage
    took_ms: float


class AdvanceAnswer(msgspec.Struct):
    """``advance``: the version followed now, the one before it, and how many paths changed."""

    sha: str | None
    from_: str | None = msgspec.field(name="from")
    changed: int = 0
    took_ms: float = 0.0


# -- status --------------------------------------------------------------------------------


class VectorsStatus(msgspec.Struct):
    space: str | None
    entries: int
    coverage: float


class VectorFillStatus(msgspec.Struct):
    """The background fill's progress."""

    filling: bool
    batches: int
    persisted: int
    fill_remaining: int | None
    fill_embedded: int
    fill_rate_per_s: float | None
    last_error: str | None
    last_error_code: str | None


class SnapshotStatus(msgspec.Struct):
    """The head snapshot writer: how many it wrote and the last one."""

    writes: int
    writing: bool
    last_sha: str | None
    last_ms: float | None
    last_bytes: int | None
    last_error: str | None


class IndexUpdates(msgspec.Struct):
    """The SQLite plane's background updates."""

    updates: int
    updating: bool
    last_update_ms: float | None
    indexed_sha: str | None
    last_error: str | None
    last_error_code: str | None


class StatusAnswer(msgspec.Struct):
    """``status``; ``load_source`` is ``git``, ``snapshot`` or ``snapshot+advance``.

    ``memory`` is the process's resident and peak bytes, or with ``memory: true`` the whole
    accounting; ``embedder_state.state`` is ``off``, ``idle``, ``loading``, ``converting``,
    ``ready`` or ``failed``.
    """

    store: str
    ref: str
    sha: str | None
    records: int
    skipped: int
    load_source: str
    load_ms: float
    advances: int
    last_advance_ms: float | None
    last_advance_by: str | None
    vectors: VectorsStatus
    vector_fill: VectorFillStatus | None
    sessions: int
    index_path: str | None
    state_path: str | None
    index: IndexUpdates | None
    snapshot: SnapshotStatus | None
    memory: MemoryFigures
    socket: str | None
    embedder: str
    embedder_state: EmbedderState
    remote: RemoteStatus | None
    last_sleep: SleepStatusAnswer | None
    uptime_s: float
    pid: int
    version: str


class VectorsFillAnswer(msgspec.Struct):
    """``vectors.fill``: what this call embedded, and what the cache still lacks."""

    space: str | None
    embedded: int
    reused: int
    empty: int
    remaining: int
    coverage: float


class ExecAnswer(msgspec.Struct, frozen=True):
    """``exec``: what the script printed and how it ended. A script that fails is still an
    answer (``exit_code`` 1 and its stack in ``stderr``, or 124 with ``timed_out``); an error is the daemon failing to run it."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    sha: str
    took_ms: float


# -- sleep ---------------------------------------------------------------------------------


class PhaseReport(msgspec.Struct, frozen=True):
    """One phase of a run: ``ok``, ``failed`` or ``skipped`` (with its reason), its commit and
    counts, as its ``Memhtml-Phase`` and ``Memhtml-Counts`` trailers say."""

    phase: str
    ordinal: int
    status: str
    commit: str | None = None
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    reason: str | None = None
    started_at: str | None = None
    ended_at: str | None = None


class TouchReport(msgspec.Struct, frozen=True):
    """A memory a phase touched: ``kind`` is moved, folded, archived, repointed or stamped;
    ``to`` where it went, ``into`` the memory it folded into."""

    path: str
    kind: str
    phase: str
    to: str | None = None
    into: str | None = None


class RunReport(msgspec.Struct, frozen=True):
    """``sleep.run`` and ``sleep.resume`` (memhtml's ``sleep.report``); ``status`` is ``review``
    or ``dry-run``."""

    run_id: str
    branch: str
    base: str
    head: str
    status: str
    dry_run: bool
    phases: list[PhaseReport]
    touches: list[TouchReport]
    started_at: str | None = None
    ended_at: str | None = None


class ReviewCommit(msgspec.Struct, frozen=True):
    sha: str
    phase: str
    subject: str
    counts: dict[str, int]


class ReviewFile(msgspec.Struct, frozen=True):
    path: str
    kind: str
    to: str | None = None


class DiffStat(msgspec.Struct, frozen=True):
    files: int
    insertions: int
    deletions: int


class SleepReviewAnswer(msgspec.Struct, frozen=True):
    """``sleep.review``: per-phase counts, the commits, a diff stat, each touched memory
    classified, and the raw diff when asked for."""

    run_id: str
    base: str
    head: str
    merged: bool
    phases: dict[str, dict[str, int]]
    commits: list[ReviewCommit]
    stat: DiffStat
    files: list[ReviewFile]
    diff: str | None = None


class SleepStatusAnswer(msgspec.Struct, frozen=True):
    """``sleep.status`` (and ``status.last_sleep``): the latest run, read from its branch;
    ``status`` is ``merged`` or ``review``, ``started_at`` when its first phase committed."""

    run_id: str | None
    runs: list[str]
    base: str | None = None
    head: str | None = None
    merged: bool = False
    status: str | None = None
    started_at: str | None = None
    phases: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)


class SleepDiscardAnswer(msgspec.Struct, frozen=True):
    """``sleep.discard``: the run whose branch is gone, and the tip it held (main is untouched;
    ``git branch <run> <head>`` brings the run back while its commits remain)."""

    run_id: str
    head: str
    base: str
    discarded: bool = True


class SleepPlanAnswer(msgspec.Struct, frozen=True):
    """``sleep.plan``: would a run change anything, and what each phase would do."""

    sha: str
    would_change: bool
    phases: dict[str, dict[str, int]]


class IndexRebuildAnswer(msgspec.Struct, kw_only=True):
    """``index.rebuild``: what the plane's rebuild wrote, at the commit it indexed; ``skipped``
    names each file refused and why."""

    mode: str = "rebuild"
    head_sha: str
    files_indexed: int
    chunks_indexed: int
    edges_indexed: int
    embeddings_written: int
    embeddings_preserved: int
    skipped: list[SkippedFile] = msgspec.field(default_factory=list)


class IndexUpdateAnswer(msgspec.Struct, kw_only=True):
    """``index.update``: what the plane's update changed since the commit it held;
    ``unchanged`` when nothing did."""

    mode: str = "update"
    head_sha: str
    unchanged: bool
    added: int = 0
    modified: int = 0
    removed: int = 0
    renamed: int = 0
    dirty: int = 0
    reconciled: int = 0
    embeddings_written: int = 0
    skipped: list[SkippedFile] = msgspec.field(default_factory=list)


class ReinforceAnswer(msgspec.Struct):
    """``reinforce``: the paths bumped, and those still within their cooldown (or with no
    state plane to bump)."""

    bumped: list[str]
    cooled_down: list[str]


class StateExportAnswer(msgspec.Struct):
    """``state.export``: the sidecar written (``written`` false when its bytes would not
    change), its rows and bytes."""

    path: str
    rows: int
    bytes: int
    written: bool


class StateImportAnswer(msgspec.Struct):
    """``state.import``: the sidecar's rows, those restored into ``state.access`` and those
    skipped; ``has_state`` false when there is no state plane to restore into; ``refused``
    names each line not imported."""

    path: str
    rows: int
    restored: int
    skipped: int
    has_state: bool
    refused: list[RefusedRow]


class TracesIndexAnswer(msgspec.Struct):
    """``traces.index``: what one scan of the transcripts under ``trace_root`` read."""

    files_seen: int
    files_read: int
    files_skipped: int
    bytes_read: int
    sessions: int
    prompts: int
    bad_lines: int
    files_missing: int
    tailed: int
    rescanned: int
    trace_root: str


#: What a SQLite plane method answers.
PlaneAnswer = (
    plane_answers.RecallAnswer
    | plane_answers.IndexSearchAnswer
    | plane_answers.IndexStatusAnswer
    | plane_answers.TracesSearchAnswer
    | plane_answers.TracesShowAnswer
    | IndexRebuildAnswer
    | IndexUpdateAnswer
    | ReinforceAnswer
    | StateExportAnswer
    | StateImportAnswer
    | TracesIndexAnswer
)


def answer_types() -> dict[str, Any]:
    """Each method's answer type, by method name (``docs/protocol.md``'s answer tables).

    A function, not a constant: the gate's report lives with the gate (``headd.head.gate``), whose
    import brings the head's search along, which the wire's importers (every client) never need.
    """
    from headd.head.gate import HeadGateReport
    from headd.sleep.merge_report import MergeReport
    from headd.store.results import (
        ApplyResult,
        CloseResult,
        CommitResult,
        ListResult,
        OpenResult,
        RebaseResult,
    )

    return {
        "status": StatusAnswer,
        "search": SearchAnswer | plane_answers.IndexSearchAnswer,
        "read": ReadAnswer,
        "skipped": SkippedAnswer,
        "resolve": ResolveAnswer,
        "inbound": PathsAnswer,
        "by_entity": PathsAnswer,
        "by_frame_key": PathsAnswer,
        "near_duplicates": NearDuplicatesAnswer,
        "by_content_hash": PathsAnswer,
        "advance": AdvanceAnswer,
        "gate": HeadGateReport,
        "session.open": OpenResult,
        "session.apply": ApplyResult,
        "session.commit": CommitResult,
        "session.rebase": RebaseResult,
        "session.close": CloseResult,
        "session.list": ListResult,
        "recall": plane_answers.RecallAnswer,
        "reinforce": ReinforceAnswer,
        "index.rebuild": IndexRebuildAnswer,
        "index.update": IndexUpdateAnswer,
        "index.status": plane_answers.IndexStatusAnswer,
        "state.export": StateExportAnswer,
        "state.import": StateImportAnswer,
        "traces.index": TracesIndexAnswer,
        "traces.search": plane_answers.TracesSearchAnswer,
        "traces.show": plane_answers.TracesShowAnswer,
        "vectors.fill": VectorsFillAnswer,
        "sync": SyncAnswer,
        "exec": ExecAnswer,
        "list": browse.ListAnswer,
        "census": browse.CensusAnswer,
        "neighbors": browse.NeighborsAnswer,
        "source": browse.SourceAnswer,
        "traces.links": browse.TracesLinksAnswer,
        "state.usage": browse.StateUsageAnswer,
        "entity.activity": browse.EntityActivityAnswer,
        "tasks": browse.TasksAnswer,
        "doctor": doctor.DoctorAnswer,
        "state.prune": doctor.StatePruneAnswer,
        "publish": publish.PublishAnswer,
        "sleep.plan": SleepPlanAnswer,
        "sleep.run": RunReport,
        "sleep.review": SleepReviewAnswer,
        "sleep.merge": MergeReport,
        "sleep.resume": RunReport,
        "sleep.status": SleepStatusAnswer,
        "sleep.discard": SleepDiscardAnswer,
    }
