"""memhtml's ``doctor`` in ``headctl``: the store's health, and ``--fix`` for what needs no decision.

The report is the daemon's ``doctor`` (the version's findings, ``headd.head.doctor``, with the
checkout's dirty paths, the plane's orphan state rows and indexed commit), printed with memhtml's
command line's keys. ``--fix`` repairs what memhtml repairs: a dangling head link whose target
moved under ``archive/<year>/`` is rewritten to the archive path, one whose target is gone is
dropped, all in one daemon session and one commit; orphan access rows are pruned from the state
plane. The report is the one found before the repair (``healthy`` never turns green by fixing),
with ``repaired`` beside it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, NamedTuple, TextIO

import msgspec

from headd.wire.doctor import DoctorAnswer
from headd_client.headctl_commands import Command, Context
from headd_client.headctl_memhtml import camel, camel_keys, runner
from headd_client.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from headd_client.mcp.tools import Tools

_FINDING_LISTS = ("dangling", "overdue_tasks", "stale_blockers", "untyped_entities", "warnings")


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fix",
        action="store_true",
        help="rewrite dangling links to their archive path (or drop them) in one commit and "
        "prune orphan state rows; the other findings need a decision",
    )
    p.add_argument(
        "--secrets",
        action="store_true",
        help="scan every blob ever committed for credentials instead (no daemon needed)",
    )


class Repaired(msgspec.Struct, rename="camel"):
    """What ``--fix`` did, beside the report (memhtml's keys: ``failedWrites``, …)."""

    rewritten: int
    dropped: int
    failed_writes: list[str]
    pruned_access_rows: int
    commit_sha: str | None


class Health(NamedTuple):
    """The daemon's ``doctor`` answer and, with ``--fix``, the repair made after it."""

    answer: DoctorAnswer
    repaired: Repaired | None


def report_of(answer: DoctorAnswer) -> JsonObject:
    """The daemon's ``doctor`` answer as memhtml's ``doctor.report`` data."""
    plain: dict[str, JsonValue] = msgspec.to_builtins(answer)
    found: dict[str, JsonValue] = msgspec.to_builtins(answer.findings)
    out: JsonObject = {"root": answer.root, "healthy": answer.healthy}
    for key, value in found.items():
        rows = value if key in _FINDING_LISTS and isinstance(value, list) else None
        out[camel(key)] = (
            [camel_keys(row) for row in rows if isinstance(row, dict)]
            if rows is not None
            else value
        )
    for key in (
        "orphan_access_rows",
        "stuck_sleep_runs",
        "index_fresh",
        "index_head_sha",
        "head_sha",
        "vector_coverage",
        "vector_coverage_floor",
        "vector_coverage_low",
        "configured_embed_model",
        "stored_embed_model",
        "embed_model_matches",
        "chunks",
        "embeddings",
        "vector_coverage_remedy",
        "dirty",
    ):
        out.update(camel_keys(plain, [key]))
    return out


def _plain(health: Health) -> JsonObject:
    out = report_of(health.answer)
    if health.repaired is not None:
        out["repaired"] = msgspec.to_builtins(health.repaired)
    return out


def _repair(tools: Tools, answer: DoctorAnswer) -> Repaired:
    from headd.ops import LinkOp, Op, UnlinkOp
    from headd_client import calls
    from headd_client.mcp.writes import WriteSession

    dangling = answer.findings.dangling
    rewritten = dropped = 0
    failed: list[str] = []
    sha = None
    if dangling:
        with WriteSession(tools.link) as session:
            for finding in dangling:
                src, rel = finding.src_path, finding.rel
                ops: list[Op] = [UnlinkOp(path=src, rel=rel, href="/" + finding.dst_path)]
                if finding.rewrite_to is not None:
                    ops.append(LinkOp(path=src, rel=rel, href="/" + finding.rewrite_to))
                try:
                    refused = bool(session.apply(ops).violations)
                except Exception:  # an op the daemon refuses leaves this finding unrepaired
                    refused = True
                if refused:
                    failed.append(src)
                elif finding.rewrite_to is None:
                    dropped += 1
                else:
                    rewritten += 1
            if rewritten + dropped:
                sha = session.commit(
                    f"memhtml(link): repair {rewritten + dropped} dangling links"
                ).sha
    pruned = 0
    if answer.orphan_access_rows:
        prune = calls.state_prune(answer.orphan_access_rows)
        pruned = prune.decode(tools.link.call(prune.method, prune.params, idempotent=False)).pruned
    return Repaired(rewritten, dropped, failed, pruned, sha)


def _doctor(tools: Tools, args: argparse.Namespace, _ctx: Context) -> Health:
    from headd_client import calls

    answer = tools.link.run(calls.doctor())
    return Health(answer, _repair(tools, answer) if args.fix else None)


def _show(health: Health, out: TextIO) -> None:
    result, found = health.answer, health.answer.findings
    out.write(f"{'healthy' if result.healthy else 'needs attention'}: {result.root}\n")
    for row in found.dangling:
        target = row.rewrite_to or "(gone)"
        out.write(f"  dangling  {row.src_path} -{row.rel}-> {row.dst_path}  fix: {target}\n")
    for path in result.orphan_access_rows:
        out.write(f"  orphan state row  {path}\n")
    out.write(
        f"  inbox {found.inbox_depth}{' (crowded)' if found.inbox_crowded else ''}, "
        f"task inbox {found.inbox_task_depth}"
        f"{' (crowded)' if found.inbox_tasks_crowded else ''}\n"
    )
    for overdue in found.overdue_tasks:
        out.write(f"  overdue  {overdue.path}  due {overdue.due_at}\n")
    for stale in found.stale_blockers:
        out.write(
            f"  stale blocker  {stale.path} <- {stale.blocker_path} ({stale.blocker_state})\n"
        )
    for untyped in found.untyped_entities:
        out.write(f"  untyped entity  {untyped.entity_name} ({untyped.files} files)\n")
    for warned in found.warnings:
        out.write(f"  warnings  {warned.path}: {'; '.join(warned.warnings)}\n")
    for path in found.unparseable:
        out.write(f"  unparseable  {path}\n")
    for path in result.dirty:
        out.write(f"  uncommitted  {path}\n")
    if not result.index_fresh:
        out.write(f"  index at {result.index_head_sha}, tip at {result.head_sha}\n")
    repaired = health.repaired
    if repaired is not None:
        out.write(
            f"repaired: {repaired.rewritten} rewritten, {repaired.dropped} dropped, "
            f"{repaired.pruned_access_rows} state rows pruned"
            + (f"  commit {repaired.commit_sha[:12]}" if repaired.commit_sha else "")
            + "\n"
        )


def _run(args: argparse.Namespace, ctx: Context) -> int:
    """``--secrets`` scans git's history in this process; the health report asks the daemon."""
    if args.secrets:
        from headd_client.import_cli import doctor_secrets

        return doctor_secrets(ctx.store, ctx.stdout, ctx.stderr, as_json=args.json)
    return _health(args, ctx)


_health = runner(_doctor, _show, _plain)


def commands() -> list[Command]:
    return [
        Command(
            ("doctor",),
            "the store's health: dangling links, orphan state rows, inbox depth, vocabulary, "
            "staleness (--fix repairs what needs no decision; --secrets scans history for "
            "credentials)",
            _args,
            local=_run,
        )
    ]
