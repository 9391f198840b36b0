"""memhtml's ``task add``, ``task status``, ``task list`` and ``entity activity`` in ``headctl``.

A task is a ``task`` memory: ``task add`` is the bridge's write (placed under
``projects/<ws>/tasks/`` or ``areas/inbox/tasks/`` by the one placement rule), ``task status``
re-stamps the file's status in one daemon session (and, for ``done``, archives it in the same
commit, as memhtml does), and ``task list`` and ``entity activity`` are the daemon's ``tasks`` and
``entity.activity``: scans of the version, never ranked. JSON keys are memhtml's command line's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO, TypedDict

import msgspec

from headd.memfile.vocabulary import TASK_STATUSES
from headd.wire.browse import (
    ENTITY_ACTIVITY_DEFAULT,
    LIST_DEFAULT,
    EntityActivityRequest,
    TasksRequest,
)
from headd_client.headctl_commands import Command, Context
from headd_client.headctl_memhtml import WriteDone, provenance, provenance_flags, runner

if TYPE_CHECKING:
    from headd_client.mcp.tools import Tools

_DONE = "done"


# -- task add -------------------------------------------------------------------------------


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--title", required=True, help="what the task is (its title and file name)")
    p.add_argument("--claim", help="the task statement, as the <mark> (default: the title)")
    p.add_argument(
        "--body", action="append", metavar="TEXT", help="a paragraph of notes (repeatable)"
    )
    p.add_argument(
        "--status",
        choices=TASK_STATUSES,
        default="todo",
        help="the opening status (default todo)",
    )
    p.add_argument("--due", metavar="DATE", help="an ISO date or datetime deadline")
    p.add_argument("--workspace", metavar="SLUG", help="route the task to projects/<slug>/tasks/")
    p.add_argument("--tag", action="append", metavar="TAG", help="a tag (repeatable)")
    p.add_argument("--entity", action="append", metavar="TYPE:NAME", help="an entity (repeatable)")
    provenance_flags(p, "the session that opened the task")


class Added(TypedDict):
    """memhtml's ``task add --json``."""

    path: str
    created: bool
    deduped: bool
    existingPath: str | None
    taskStatus: str
    dueAt: str | None
    commitSha: str | None


def _add(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Added:
    answer = tools.memory_write(
        {
            "title": args.title,
            "claim": args.claim or args.title,
            "body": list(args.body or ()),
            "memory_type": "task",
            "task_status": args.status,
            "due": args.due,
            "workspace": args.workspace,
            "tags": args.tag,
            "entities": args.entity,
            **provenance(args),
        }
    )
    written = msgspec.convert(answer, WriteDone)
    return {
        "path": written.path,
        "created": written.created,
        "deduped": written.deduped,
        "existingPath": written.existing_path,
        "taskStatus": args.status,
        "dueAt": args.due,
        "commitSha": written.commit_sha,
    }


def _show_added(result: Added, out: TextIO) -> None:
    if result["deduped"]:
        out.write(f"already held at {result['path']} (nothing written)\n")
        return
    out.write(
        f"opened {result['path']} ({result['taskStatus']})  "
        f"commit {str(result['commitSha'])[:12]}\n"
    )


# -- task status ----------------------------------------------------------------------------


def _status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help="the task file")
    p.add_argument(
        "status", metavar="STATUS", choices=TASK_STATUSES, help="todo, doing, blocked, done"
    )
    p.add_argument("--reason", default="", help="why it closed (on the archive commit, for done)")


class Retasked(TypedDict, total=False):
    """memhtml's ``task status --json`` (``archivePath`` only when the status moved)."""

    path: str
    taskStatus: str
    archived: bool
    archivePath: str | None
    commitSha: str | None
    unchanged: bool


def _status(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Retasked:
    from headd.memfile.render import format_instant
    from headd.ops import Archive, Op, Retask
    from headd_client.mcp.failures import ToolFailure
    from headd_client.mcp.writes import WriteSession, violation_failure

    path = args.path.strip().lstrip("/")
    record = tools._live(path)
    if record.memory_type != "task":
        raise ToolFailure("ERR_INVALID_MEMORY", f"invalid memory: {path} is not a task")
    if record.task_status == args.status:
        return {
            "path": path,
            "taskStatus": args.status,
            "archived": False,
            "commitSha": None,
            "unchanged": True,
        }
    stamp = format_instant(datetime.now(UTC))
    done = args.status == _DONE
    moved = path
    with WriteSession(tools.link) as session:
        # two applies, one commit: the archive stamps the file the retask left, which the
        # session's view holds only once the retask is applied
        batches: list[list[Op]] = [[Retask(path=path, status=args.status, at=stamp)]]
        if done:
            batches.append([Archive(path=path)])
        for ops in batches:
            applied = session.apply(ops)
            if applied.violations:
                raise violation_failure(applied.violations[0])
            moved = (applied.paths or (path,))[-1]
        reason = " ".join(str(args.reason or "").split())
        message = (
            f"memhtml(archive): {path}" + (f" — {reason}" if reason else "")
            if done
            else f"memhtml(task): {args.status} {path}"
        )
        landed = session.commit(message)
    return {
        "path": path,
        "taskStatus": args.status,
        "archived": done,
        "archivePath": moved if done else None,
        "commitSha": landed.sha,
        "unchanged": False,
    }


def _show_status(result: Retasked, out: TextIO) -> None:
    if result["unchanged"]:
        out.write(f"{result['path']} is already {result['taskStatus']} (nothing committed)\n")
        return
    where = f", archived to {result['archivePath']}" if result.get("archivePath") else ""
    out.write(
        f"{result['path']} -> {result['taskStatus']}{where}  "
        f"commit {str(result['commitSha'])[:12]}\n"
    )


# -- task list ------------------------------------------------------------------------------


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--status", choices=TASK_STATUSES, help="one task status")
    p.add_argument("--workspace", metavar="SLUG", help="one workspace")
    p.add_argument(
        "--due-before", metavar="DATE", help="tasks due strictly before this calendar day"
    )
    p.add_argument(
        "--limit", type=int, default=LIST_DEFAULT, metavar="N", help="rows per page (default 50)"
    )
    p.add_argument("--cursor", metavar="PATH", help="the nextCursor of the previous page")
    p.add_argument(
        "--include-archived",
        action="store_true",
        help="include finished tasks (done archives them, so they are otherwise absent)",
    )


class ListedTask(TypedDict):
    path: str
    title: str
    taskStatus: str | None
    workspace: str | None
    archived: bool
    updatedAt: str
    blockedBy: list[str]
    dueAt: str | None


class TaskPage(TypedDict):
    """memhtml's ``task list --json``."""

    tasks: list[ListedTask]
    nextCursor: str | None


def _list(tools: Tools, args: argparse.Namespace, _ctx: Context) -> TaskPage:
    from headd_client import calls

    request = TasksRequest(
        status=args.status,
        workspace=args.workspace,
        due_before=args.due_before,
        limit=args.limit,
        cursor=args.cursor,
        include_archived=args.include_archived,
    )
    answer = tools.link.run(calls.tasks(request))
    rows: list[ListedTask] = [
        {
            "path": task.path,
            "title": task.title,
            "taskStatus": task.task_status,
            "workspace": task.workspace,
            "archived": task.archived,
            "updatedAt": task.updated_at,
            "blockedBy": task.blocked_by,
            "dueAt": task.due,
        }
        for task in answer.tasks
    ]
    return {"tasks": rows, "nextCursor": answer.next_cursor}


def _show_list(result: TaskPage, out: TextIO) -> None:
    for task in result["tasks"]:
        due = f"  due {task['dueAt']}" if task["dueAt"] else ""
        blocked = f"  blocked by {', '.join(task['blockedBy'])}" if task["blockedBy"] else ""
        out.write(f"{task['taskStatus'] or '-':<8}{task['path']}  {task['title']}{due}{blocked}\n")
    if result["nextCursor"]:
        out.write(f"more: --cursor {result['nextCursor']}\n")
    elif not result["tasks"]:
        out.write("no tasks\n")


# -- entity activity ------------------------------------------------------------------------


def _activity_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--type", dest="entity_type", metavar="TYPE", help="one entity type (service)")
    p.add_argument(
        "--limit",
        type=int,
        default=ENTITY_ACTIVITY_DEFAULT,
        metavar="N",
        help="rows, 1 to 500 (clamped into that range; default 50)",
    )
    p.add_argument("--include-archived", action="store_true", help="count archived memories too")


class ActiveEntity(TypedDict):
    entity: str
    entityType: str
    entityName: str
    fileCount: int
    lastActivityAt: str | None
    lastWrittenAt: str | None


class Activity(TypedDict):
    """memhtml's ``entity activity --json``."""

    entities: list[ActiveEntity]
    entityCount: int
    limit: int


def _activity(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Activity:
    from headd_client import calls

    request = EntityActivityRequest(
        type=args.entity_type, limit=args.limit, include_archived=args.include_archived
    )
    answer = tools.link.run(calls.entity_activity(request))
    rows: list[ActiveEntity] = [
        {
            "entity": row.entity,
            "entityType": row.entity_type,
            "entityName": row.entity_name,
            "fileCount": row.file_count,
            "lastActivityAt": row.last_activity_at,
            "lastWrittenAt": row.last_written_at,
        }
        for row in answer.entities
    ]
    return {"entities": rows, "entityCount": answer.entity_count, "limit": answer.limit}


def _show_activity(result: Activity, out: TextIO) -> None:
    for row in result["entities"]:
        out.write(f"{row['lastActivityAt'] or '-':<21}{row['fileCount']:>5}  {row['entity']}\n")
    if not result["entities"]:
        out.write("no entities\n")


# -- the table ------------------------------------------------------------------------------


def commands() -> list[Command]:
    def command(
        words: tuple[str, ...],
        help_: str,
        arguments: Callable[[argparse.ArgumentParser], None],
        local: Callable[[argparse.Namespace, Context], int],
    ) -> Command:
        return Command(words, help_, arguments, local=local)

    return [
        command(
            ("task", "add"),
            "open a task: a task memory under projects/<ws>/tasks/ or areas/inbox/tasks/",
            _add_args,
            runner(_add, _show_added),
        ),
        command(
            ("task", "status"),
            "move a task's status (done stamps and archives it, in one commit)",
            _status_args,
            runner(_status, _show_status),
        ),
        command(
            ("task", "list"),
            "the task working set: a scan in path order with blockers, never ranked",
            _list_args,
            runner(_list, _show_list),
        ),
        command(
            ("entity", "activity"),
            "every entity with its file count and last activity, newest first",
            _activity_args,
            runner(_activity, _show_activity),
        ),
    ]
