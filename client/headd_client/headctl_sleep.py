"""``headctl sleep plan|run|review|merge|discard|resume|status``: the ``sleep.*`` methods, shown.

Each is one daemon call. ``merge`` exits 1 when the gates refuse (nothing moved; the reports are
printed, and with ``--json`` the whole answer), as ``gate`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

C = TypeVar("C")

GROUP_HELP = "curation on a review branch: plan, run, review, merge, discard, resume, status"


def _phases(value: str | None) -> list[str] | None:
    return None if value is None else [p.strip() for p in value.split(",") if p.strip()]


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--date", metavar="YYYY-MM-DD", help="the run date, naming the branch")
    p.add_argument("--phases", metavar="A,B", help="a comma-separated subset of the phases")
    p.add_argument("--dry-run", action="store_true", help="report counts, commit nothing")


def _plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--date", metavar="YYYY-MM-DD", help="the date the run would have")


def _run_id_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="the run id, sleep/YYYY-MM-DD")


def _review_args(p: argparse.ArgumentParser) -> None:
    _run_id_args(p)
    p.add_argument("--diff", action="store_true", help="also the raw diff against the base")


def _merge_args(p: argparse.ArgumentParser) -> None:
    _run_id_args(p)
    p.add_argument(
        "--skip-gate", action="store_true", help="land without the gates (logged, recorded)"
    )


def _run(args: argparse.Namespace, _ctx: object) -> tuple[str, dict[str, Any]]:
    return "sleep.run", {
        "date": args.date,
        "phases": _phases(args.phases),
        "dry_run": args.dry_run,
    }


def _counts(counts: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (counts or {}).items()) or "-"


def show_report(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"{result.get('run_id')} ({result.get('status')}): {result.get('base', '')[:12]} -> "
        f"{result.get('head', '')[:12]}",
        file=out,
    )
    for phase in result.get("phases") or []:
        commit = (phase.get("commit") or "")[:12] or "-"
        detail = phase.get("reason") or _counts(phase.get("counts"))
        print(f"  {phase['phase']:<20} {phase['status']:<8} {commit:<12}  {detail}", file=out)


def show_plan(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    verdict = "would change the store" if result.get("would_change") else "would change nothing"
    print(f"a run at {str(result.get('sha'))[:12]} {verdict}", file=out)
    for phase, counts in (result.get("phases") or {}).items():
        print(f"  {phase:<20} {_counts(counts)}", file=out)


def show_review(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    stat = result.get("stat") or {}
    merged = " (merged)" if result.get("merged") else ""
    print(
        f"{result.get('run_id')}{merged}: {stat.get('files')} files, +{stat.get('insertions')} "
        f"-{stat.get('deletions')}",
        file=out,
    )
    for commit in result.get("commits") or []:
        print(f"  {commit['sha'][:12]}  {commit['subject']}", file=out)
    for item in result.get("files") or []:
        to = f" -> {item['to']}" if item.get("to") else ""
        print(f"  {item['kind']:<10} {item['path']}{to}", file=out)
    if result.get("diff"):
        out.write(result["diff"])


def show_merge(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    if result.get("merged"):
        how = "replayed onto main" if result.get("replayed") else "fast-forwarded main"
        gate = " (gates skipped)" if result.get("skipped_gate") else ""
        print(f"{result.get('run_id')} merged: {how} to {result['landed'][:12]}{gate}", file=out)
    else:
        print(f"{result.get('run_id')} not merged: {result.get('reason')}", file=out)
    for path in result.get("conflicts") or []:
        print(f"  conflict   {path}", file=out)
    head = result.get("head_gate")
    if head:
        print(
            f"  head gate      {'passed' if head['passed'] else 'refused'}: MRR "
            f"{head['mrr_before']} -> {head['mrr']} (floor {head['floor']}), inversions "
            f"{head['inversions_before']} -> {len(head['inversions'])}",
            file=out,
        )
    retention = result.get("retention_gate")
    if retention:
        print(
            f"  retention gate {'passed' if retention['passed'] else 'refused'}: MRR "
            f"{retention['mrr_before']} -> {retention['mrr']} (floor {retention['floor']}), "
            f"inversions {retention['inversions_before']} -> {retention['inversions']}",
            file=out,
        )
        for probe in retention.get("fell") or []:
            print(f"    fell       {probe['path']} ({probe['query']!r})", file=out)
        for path in retention.get("undeclared_evictions") or []:
            print(f"    undeclared {path}", file=out)
        for path in retention.get("used_evicted") or []:
            print(f"    used       {path}", file=out)


def show_discard(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"{result.get('run_id')} discarded: its branch at {str(result.get('head'))[:12]} is "
        "deleted; main is unchanged",
        file=out,
    )


def show_status(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    if not result.get("run_id"):
        print("no sleep run yet", file=out)
        return
    merged = "merged" if result.get("merged") else "awaiting review"
    print(f"{result['run_id']} ({merged}), {len(result.get('runs') or [])} run(s)", file=out)
    for phase, counts in (result.get("phases") or {}).items():
        print(f"  {phase:<20} {_counts(counts)}", file=out)


def commands(c: Callable[..., C]) -> list[C]:
    """The commands, each built by ``c`` (headctl's ``Command``, passed in so that this module
    imports nothing of the module that registers it)."""
    return [
        c(
            ("sleep", "plan"),
            "would a run change anything (a dry run from the head)",
            _plan_args,
            lambda a, _c: ("sleep.plan", {"date": a.date}),
            show_plan,
        ),
        c(
            ("sleep", "run"),
            "run the phases on a new sleep/<date> branch",
            _run_args,
            _run,
            show_report,
        ),
        c(
            ("sleep", "review"),
            "per-phase counts, commits, diff stat and touched memories of RUN",
            _review_args,
            lambda a, _c: ("sleep.review", {"run": a.run, "diff": a.diff}),
            show_review,
        ),
        c(
            ("sleep", "merge"),
            "land RUN on main through the head and retention gates (exit 1 when refused)",
            _merge_args,
            lambda a, _c: ("sleep.merge", {"run": a.run, "skip_gate": a.skip_gate}),
            show_merge,
        ),
        c(
            ("sleep", "discard"),
            "delete RUN's review branch, main untouched (refused for a merged run)",
            _run_id_args,
            lambda a, _c: ("sleep.discard", {"run": a.run}),
            show_discard,
        ),
        c(
            ("sleep", "resume"),
            "run again the phases of RUN that have no trailer",
            _run_id_args,
            lambda a, _c: ("sleep.resume", {"run": a.run}),
            show_report,
        ),
        c(
            ("sleep", "status"),
            "the latest run",
            request=lambda a, _c: ("sleep.status", {}),
            human=show_status,
        ),
    ]
