"""``doctor``'s request and answer: the store's health as memhtml's ``doctor`` reports it.

The findings over the version are pure (``headd.head.doctor``); the daemon adds what only it
knows (the work tree's dirty paths, the plane's indexed commit and orphan state rows, the vector
coverage). ``state.prune`` removes orphan state rows, the one repair that is not a commit.
"""

from __future__ import annotations

import msgspec


class DoctorRequest(msgspec.Struct, forbid_unknown_fields=True):
    """``doctor``: the findings at the tip (a report; ``headctl doctor --fix`` repairs)."""

    #: Today as ``YYYY-MM-DD`` (what "overdue" is measured against); default the daemon's clock.
    today: str | None = None


class Dangling(msgspec.Struct, kw_only=True):
    """A head link whose target no memory holds; ``rewrite_to`` is the archive path it moved to
    (the newest of the last ten years' partitions), or None when it is gone."""

    src_path: str
    rel: str
    dst_path: str
    rewrite_to: str | None


class Overdue(msgspec.Struct, kw_only=True):
    path: str
    task_status: str | None
    due_at: str


class StaleBlocker(msgspec.Struct, kw_only=True):
    path: str
    blocker_path: str
    #: ``archived`` (finished work whose edge nobody cleared) or ``missing``.
    blocker_state: str


class UntypedEntity(msgspec.Struct, kw_only=True):
    entity_name: str
    files: int


class FileWarnings(msgspec.Struct, kw_only=True):
    path: str
    warnings: list[str]


class Findings(msgspec.Struct, kw_only=True):
    """What the version alone shows."""

    dangling: list[Dangling]
    inbox_depth: int
    inbox_crowded: bool
    inbox_task_depth: int
    inbox_tasks_crowded: bool
    overdue_tasks: list[Overdue]
    stale_blockers: list[StaleBlocker]
    untyped_entities: list[UntypedEntity]
    untyped_entity_total: int
    warnings: list[FileWarnings]
    unparseable: list[str]


class DoctorAnswer(msgspec.Struct, kw_only=True):
    root: str
    healthy: bool
    head_sha: str | None
    findings: Findings
    orphan_access_rows: list[str]
    stuck_sleep_runs: list[str]
    index_fresh: bool
    index_head_sha: str | None
    vector_coverage: float
    vector_coverage_floor: float
    vector_coverage_low: bool
    #: The embedding space the daemon's embedder writes, and the one its vector cache holds
    #: (one space per cache, so they match whenever an embedder runs); None with ``--embedder off``.
    configured_embed_model: str | None = None
    stored_embed_model: str | None = None
    embed_model_matches: bool = False
    #: What is embeddable (one chunk per record) and how many vectors the cache holds.
    chunks: int = 0
    embeddings: int = 0
    #: The command that fills a low coverage, None when coverage is not low.
    vector_coverage_remedy: str | None = None
    dirty: list[str]


class StatePrune(msgspec.Struct, forbid_unknown_fields=True):
    """``state.prune``: delete the state rows of ``paths`` (orphans ``doctor`` found)."""

    paths: list[str]


class StatePruneAnswer(msgspec.Struct, kw_only=True):
    pruned: int
