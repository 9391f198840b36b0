"""What the SQLite plane's reads answer, as msgspec Structs: recall's disclosure pack, the plane's
four-arm search, the index's status, and the transcript sessions (``traces.search``,
``traces.show``).

The plane builds these values (it imports the wire, which sits below it) and the daemon and
``headctl``'s no-daemon path encode them as they are, so the two paths cannot answer different
shapes and ``docs/protocol.md`` describes them from here. Field order is the order the plane's
rows and reports always had; a part an answer leaves out is ``UNSET``, never ``null``.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

# -- recall --------------------------------------------------------------------------------


class RecallLine(msgspec.Struct):
    """A memory recall names without quoting it (over the budget, or its entity's cap reached)."""

    path: str
    title: str
    claim: str
    memory_type: str


class RecallEntry(msgspec.Struct):
    """A memory recall quotes: its index line and its disclosure text (never a ``<details>``
    body or an ``<aside>``)."""

    path: str
    title: str
    claim: str
    memory_type: str
    body: str


class RecallFold(msgspec.Struct):
    """One envelope of the pack (the arcs', or the other memories'), folded under its budget."""

    disclosed: list[RecallEntry]
    index_lines: list[RecallLine]
    spent_chars: int
    truncated: bool


class RecallAnswer(msgspec.Struct):
    """``recall``: the quotes and index lines of both envelopes, arcs first, at the indexed
    commit ``sha``; ``spent`` counts UTF-16 code units, as memhtml does."""

    sha: str
    entries: list[RecallEntry]
    index_lines: list[RecallLine]
    spent: int
    truncated: bool
    arcs: RecallFold
    memories: RecallFold
    degraded: bool
    vector_coverage: float


# -- the plane's search --------------------------------------------------------------------


class IndexHit(msgspec.Struct):
    """One hit of the plane's search; ``arms`` are those of ``fts``, ``vector``, ``recency``,
    ``salience`` that ranked it."""

    path: str
    title: str
    claim: str
    memory_type: str
    score: float
    confidence: float
    updated_at: str
    snippet: str
    entities: list[str]
    superseded_by: str | None
    arms: list[str]


class ArchivedMatch(msgspec.Struct):
    """An archived memory the scope would have matched (an empty result's hint)."""

    path: str
    superseded_by: str | None


class IndexSearchAnswer(msgspec.Struct):
    """``search`` with ``plane: "index"``: the SQLite plane's four-arm retrieval at the indexed
    commit ``sha``; ``scope_empty`` when a narrowing scope matched nothing, with the archived
    memories it would have matched."""

    sha: str
    plane: str
    hits: list[IndexHit]
    arms: list[str]
    degraded: bool
    vector_coverage: float
    entity_scope: str | None
    scope_empty: bool
    archived_matches: int
    archived: list[ArchivedMatch]
    took_ms: float


# -- index.status --------------------------------------------------------------------------


class IndexVectors(msgspec.Struct, frozen=True):
    """How many chunks the index holds and how many have a vector of the model ``model``."""

    chunks: int
    embeddings: int
    coverage: float
    model: str | None


class IndexDiskBytes(msgspec.Struct):
    """The plane's files as they lie on disk (a file not there counts 0)."""

    index_db: int
    index_wal: int
    state_db: int
    state_wal: int


class IndexStatusAnswer(msgspec.Struct):
    """``index.status``: what index.db holds and at which commit; ``stale`` when a rebuild
    emptied it and did not finish; ``space`` the embedding model its vectors belong to."""

    index_path: str
    state_path: str
    indexed: bool
    stale: bool
    head_sha: str | None
    rebuilt_at: str | None
    updated_at: str | None
    space: str | None
    files: int
    chunks: int
    embeddings: int
    edges: int
    vectors: IndexVectors
    disk_bytes: IndexDiskBytes
    migrations_applied: int
    state_migrations_applied: int


# -- traces --------------------------------------------------------------------------------


class TraceHit(msgspec.Struct):
    """One transcript session ``traces.search`` found (its ``traces`` row, in short)."""

    session_id: str
    slug: str
    cwd: str | None
    first_prompt: str
    ai_title: str | None
    started_at: str | None
    ended_at: str | None
    prompt_count: int


class TracesSearchAnswer(msgspec.Struct):
    """``traces.search``: sessions best first; an empty query lists the most recent."""

    hits: list[TraceHit]


class TracePrompt(msgspec.Struct):
    """A typed prompt of a session; ``text_head`` is its first 200 characters, redacted."""

    prompt_id: str
    turn_uuid: str
    ordinal: int
    at: str
    agent_id: str | None
    text_head: str


class SessionMemory(msgspec.Struct):
    """A memory linked to a session (``memory_session_links``): ``link_kind`` is ``wrote``,
    ``read``, ``corrected`` or ``reinforced``."""

    path: str
    link_kind: str
    prompt_id: str | None
    turn_uuid: str | None
    at: str


class TraceFile(msgspec.Struct):
    """A transcript file feeding a session (its main transcript, a subagent's); ``missing_at``
    when it is gone from disk."""

    path: str
    kind: str
    agent_id: str | None
    turns: int
    prompts: int
    first_prompt: str
    bad_lines: int
    unknown_lines: int
    missing_at: str | None


class TracesShowAnswer(msgspec.Struct, kw_only=True):
    """``traces.show``: one session's ``traces`` row, its prompts, the memories linked to it
    and its files; ``missing`` when its main transcript is gone. A session known only by its
    links (``indexed: false``) has no row: its row's fields are left out."""

    session_id: str
    slug: str | UnsetType = UNSET
    cwd: str | None | UnsetType = UNSET
    git_branch: str | None | UnsetType = UNSET
    entrypoint: str | None | UnsetType = UNSET
    model: str | None | UnsetType = UNSET
    version: str | None | UnsetType = UNSET
    started_at: str | None | UnsetType = UNSET
    ended_at: str | None | UnsetType = UNSET
    prompt_count: int | UnsetType = UNSET
    turn_count: int | UnsetType = UNSET
    agent_count: int | UnsetType = UNSET
    first_prompt: str | UnsetType = UNSET
    ai_title: str | None | UnsetType = UNSET
    file_path: str | UnsetType = UNSET
    file_size: int | UnsetType = UNSET
    file_mtime: str | UnsetType = UNSET
    indexed_at: str | UnsetType = UNSET
    prompts: list[TracePrompt]
    memories: list[SessionMemory]
    files: list[TraceFile]
    missing: bool
    indexed: bool


#: The ``traces`` row's columns ``traces.show`` answers, in the table's order.
TRACE_ROW_FIELDS: tuple[str, ...] = TracesShowAnswer.__struct_fields__[
    : TracesShowAnswer.__struct_fields__.index("prompts")
]
