"""The store's health as the version shows it: memhtml's ``doctor`` findings, pure.

Each finding is memhtml 0.15.1's rule over the records instead of over ``index.db``: dangling
head links (and the archive path a moved target now has), the inbox's depth (crowded past 20) and
its task inbox's (past 10), open tasks past their day, open tasks blocked by an archived or
missing task, entities filed under ``unknown`` (a bare name), each active file's format warnings,
and the files the head could not parse.
"""

from __future__ import annotations

from collections.abc import Iterable

from headd.head.indexes import IndexedView
from headd.memfile.archive import archive_path
from headd.record import MemoryRecord
from headd.wire.doctor import (
    Dangling,
    FileWarnings,
    Findings,
    Overdue,
    StaleBlocker,
    UntypedEntity,
)

INBOX = "areas/inbox/"
TASK_INBOX = "areas/inbox/tasks/"
INBOX_WARN_DEPTH = 20
INBOX_TASK_WARN_DEPTH = 10
UNTYPED_SAMPLE = 20
ARCHIVE_LOOKBACK_YEARS = 10
_TASK = "task"
_DONE = "done"
_BLOCKS = "blocks"


def archived_form_of(target: str, held: IndexedView, year: int) -> str | None:
    """The archive path ``target`` now lives at, newest year first, or None when it is gone."""
    for back in range(ARCHIVE_LOOKBACK_YEARS + 1):
        try:
            candidate = archive_path(target, year - back)
        except Exception:  # a target that cannot be archived has no archived form
            return None
        if candidate in held:
            return candidate
    return None


def _target(href: str) -> str:
    return href.strip().lstrip("/")


def _open_task(record: MemoryRecord) -> bool:
    return record.memory_type == _TASK and not record.archived and record.task_status != _DONE


def findings(view: IndexedView, *, today: str, year: int, skipped: Iterable[str] = ()) -> Findings:
    records = sorted(view.records(), key=lambda r: r.path)
    dangling: list[Dangling] = []
    for record in records:
        for link in sorted(record.links, key=lambda lk: (lk.rel, _target(lk.href))):
            target = _target(link.href)
            if target in view:
                continue
            dangling.append(
                Dangling(
                    src_path=record.path,
                    rel=link.rel,
                    dst_path=target,
                    rewrite_to=archived_form_of(target, view, year),
                )
            )
    active = [r for r in records if not r.archived]
    depth = sum(1 for r in active if r.path.startswith(INBOX))
    task_depth = sum(1 for r in active if r.memory_type == _TASK and r.path.startswith(TASK_INBOX))
    overdue = sorted(
        (
            Overdue(path=r.path, task_status=r.task_status, due_at=r.due)
            for r in active
            if _open_task(r) and r.due is not None and r.due[:10] < today
        ),
        key=lambda o: (o.due_at, o.path),
    )
    stale: list[StaleBlocker] = []
    for record in active:
        if not _open_task(record):
            continue
        for source in view.inbound("/" + record.path):
            blocker = view.record(source)
            if blocker is None or not any(
                lk.rel == _BLOCKS and _target(lk.href) == record.path for lk in blocker.links
            ):
                continue
            if blocker.archived:
                stale.append(
                    StaleBlocker(path=record.path, blocker_path=source, blocker_state="archived")
                )
    untyped: dict[str, int] = {}
    for record in active:
        for name in {row.entity_name for row in record.entity_rows if row.entity_type == "unknown"}:
            untyped[name] = untyped.get(name, 0) + 1
    ranked = sorted(untyped.items(), key=lambda item: (-item[1], item[0]))
    return Findings(
        dangling=dangling,
        inbox_depth=depth,
        inbox_crowded=depth > INBOX_WARN_DEPTH,
        inbox_task_depth=task_depth,
        inbox_tasks_crowded=task_depth > INBOX_TASK_WARN_DEPTH,
        overdue_tasks=overdue,
        stale_blockers=stale,
        untyped_entities=[
            UntypedEntity(entity_name=n, files=c) for n, c in ranked[:UNTYPED_SAMPLE]
        ],
        untyped_entity_total=len(ranked),
        warnings=[
            FileWarnings(path=r.path, warnings=list(r.warnings)) for r in active if r.warnings
        ],
        unparseable=sorted(skipped),
    )


def healthy(found: Findings, *, orphans: int, fresh: bool, coverage_low: bool) -> bool:
    """memhtml's verdict: computed from the findings (a repair never turns a report green)."""
    return (
        not found.dangling
        and orphans == 0
        and not found.inbox_crowded
        and not found.inbox_tasks_crowded
        and not found.warnings
        and not found.unparseable
        and fresh
        and not coverage_low
    )
