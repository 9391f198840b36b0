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
from collections.abc import Mapping
from typing import Any, TextIO

from headd_client.headctl_commands import Command, Context
from headd_client.headctl_memhtml import camel, camel_keys, runner

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


def report_of(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The daemon's ``doctor`` answer as memhtml's ``doctor.report`` data."""
    found = answer["findings"]
    out: dict[str, Any] = {"root": answer["root"], "healthy": answer["healthy"]}
    for key, value in found.items():
        out[camel(key)] = [camel_keys(row) for row in value] if key in _FINDING_LISTS else value
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
        out.update(camel_keys(answer, [key]))
    return out


def _repair(tools: Any, answer: Mapping[str, Any]) -> dict[str, Any]:
    from headd.ops import LinkOp, Op, UnlinkOp
    from headd_client.mcp.writes import WriteSession

    dangling = answer["findings"]["dangling"]
    rewritten = dropped = 0
    failed: list[str] = []
    sha = None
    if dangling:
        with WriteSession(tools.link) as session:
            for finding in dangling:
                src, rel = finding["src_path"], finding["rel"]
                ops: list[Op] = [UnlinkOp(path=src, rel=rel, href="/" + finding["dst_path"])]
                if finding["rewrite_to"] is not None:
                    ops.append(LinkOp(path=src, rel=rel, href="/" + finding["rewrite_to"]))
                try:
                    refused = bool(session.apply(ops).violations)
                except Exception:  # an op the daemon refuses leaves this finding unrepaired
                    refused = True
                if refused:
                    failed.append(src)
                elif finding["rewrite_to"] is None:
                    dropped += 1
                else:
                    rewritten += 1
            if rewritten + dropped:
                sha = session.commit(
                    f"memhtml(link): repair {rewritten + dropped} dangling links"
                ).sha
    pruned = 0
    if answer["orphan_access_rows"]:
        pruned = tools.link.call(
            "state.prune", {"paths": answer["orphan_access_rows"]}, idempotent=False
        )["pruned"]
    return {
        "rewritten": rewritten,
        "dropped": dropped,
        "failedWrites": failed,
        "prunedAccessRows": pruned,
        "commitSha": sha,
    }


def _doctor(tools: Any, args: argparse.Namespace, _ctx: Context) -> dict[str, Any]:
    answer = tools.link.call("doctor", {})
    out = report_of(answer)
    if args.fix:
        out["repaired"] = _repair(tools, answer)
    return out


def _show(result: Mapping[str, Any], out: TextIO) -> None:
    out.write(f"{'healthy' if result['healthy'] else 'needs attention'}: {result['root']}\n")
    for row in result["dangling"]:
        target = row["rewriteTo"] or "(gone)"
        out.write(f"  dangling  {row['srcPath']} -{row['rel']}-> {row['dstPath']}  fix: {target}\n")
    for path in result["orphanAccessRows"]:
        out.write(f"  orphan state row  {path}\n")
    out.write(
        f"  inbox {result['inboxDepth']}{' (crowded)' if result['inboxCrowded'] else ''}, "
        f"task inbox {result['inboxTaskDepth']}"
        f"{' (crowded)' if result['inboxTasksCrowded'] else ''}\n"
    )
    for row in result["overdueTasks"]:
        out.write(f"  overdue  {row['path']}  due {row['dueAt']}\n")
    for row in result["staleBlockers"]:
        out.write(
            f"  stale blocker  {row['path']} <- {row['blockerPath']} ({row['blockerState']})\n"
        )
    for row in result["untypedEntities"]:
        out.write(f"  untyped entity  {row['entityName']} ({row['files']} files)\n")
    for row in result["warnings"]:
        out.write(f"  warnings  {row['path']}: {'; '.join(row['warnings'])}\n")
    for path in result["unparseable"]:
        out.write(f"  unparseable  {path}\n")
    for path in result["dirty"]:
        out.write(f"  uncommitted  {path}\n")
    if not result["indexFresh"]:
        out.write(f"  index at {result['indexHeadSha']}, tip at {result['headSha']}\n")
    repaired = result.get("repaired")
    if repaired is not None:
        out.write(
            f"repaired: {repaired['rewritten']} rewritten, {repaired['dropped']} dropped, "
            f"{repaired['prunedAccessRows']} state rows pruned"
            + (f"  commit {str(repaired['commitSha'])[:12]}" if repaired["commitSha"] else "")
            + "\n"
        )


def _run(args: argparse.Namespace, ctx: Context) -> int:
    """``--secrets`` scans git's history in this process; the health report asks the daemon."""
    if args.secrets:
        from headd_client.import_cli import doctor_secrets

        return doctor_secrets(ctx.store, ctx.stdout, ctx.stderr, as_json=args.json)
    return _health(args, ctx)


_health = runner(_doctor, _show)


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
