"""``headctl sleep plan|run|review|merge|discard|resume|status``: the ``sleep.*`` methods, shown.

Each is one daemon call. ``merge`` exits 1 when the gates refuse (nothing moved; the reports are
printed, and with ``--json`` the whole answer), as ``gate`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TextIO, TypeVar

from headd_client.headctl_output import Later, typed
from headd_client.json_types import JsonObject

if TYPE_CHECKING:
    from headd.sleep import merge_report
    from headd.wire import answers
else:
    answers = Later("headd.wire.answers")
    #: The merge report's gates load the head's search: imported on the first merge shown.
    merge_report = Later("headd.sleep.merge_report")

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


def _run(args: argparse.Namespace, _ctx: object) -> tuple[str, JsonObject]:
    return "sleep.run", {
        "date": args.date,
        "phases": _phases(args.phases),
        "dry_run": args.dry_run,
    }


def _counts(counts: Mapping[str, int] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (counts or {}).items()) or "-"


def _report(result: answers.RunReport, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"{result.run_id} ({result.status}): {result.base[:12]} -> {result.head[:12]}",
        file=out,
    )
    for phase in result.phases:
        commit = (phase.commit or "")[:12] or "-"
        detail = phase.reason or _counts(phase.counts)
        print(f"  {phase.phase:<20} {phase.status:<8} {commit:<12}  {detail}", file=out)


def _plan(result: answers.SleepPlanAnswer, args: argparse.Namespace, out: TextIO) -> None:
    verdict = "would change the store" if result.would_change else "would change nothing"
    print(f"a run at {result.sha[:12]} {verdict}", file=out)
    for phase, counts in result.phases.items():
        print(f"  {phase:<20} {_counts(counts)}", file=out)


def _review(result: answers.SleepReviewAnswer, args: argparse.Namespace, out: TextIO) -> None:
    stat = result.stat
    merged = " (merged)" if result.merged else ""
    print(
        f"{result.run_id}{merged}: {stat.files} files, +{stat.insertions} -{stat.deletions}",
        file=out,
    )
    for commit in result.commits:
        print(f"  {commit.sha[:12]}  {commit.subject}", file=out)
    for item in result.files:
        to = f" -> {item.to}" if item.to else ""
        print(f"  {item.kind:<10} {item.path}{to}", file=out)
    if result.diff:
        out.write(result.diff)


def _merge(result: merge_report.MergeReport, args: argparse.Namespace, out: TextIO) -> None:
    if result.merged:
        how = "replayed onto main" if result.replayed else "fast-forwarded main"
        gate = " (gates skipped)" if result.skipped_gate else ""
        print(f"{result.run_id} merged: {how} to {str(result.landed)[:12]}{gate}", file=out)
    else:
        print(f"{result.run_id} not merged: {result.reason}", file=out)
    for path in result.conflicts:
        print(f"  conflict   {path}", file=out)
    head = result.head_gate
    if head:
        print(
            f"  head gate      {'passed' if head.passed else 'refused'}: MRR "
            f"{head.mrr_before} -> {head.mrr} (floor {head.floor}), inversions "
            f"{head.inversions_before} -> {len(head.inversions)}",
            file=out,
        )
    retention = result.retention_gate
    if retention:
        print(
            f"  retention gate {'passed' if retention.passed else 'refused'}: MRR "
            f"{retention.mrr_before} -> {retention.mrr} (floor {retention.floor}), "
            f"inversions {retention.inversions_before} -> {retention.inversions}",
            file=out,
        )
        for probe in retention.fell:
            print(f"    fell       {probe.path} ({probe.query!r})", file=out)
        for path in retention.undeclared_evictions:
            print(f"    undeclared {path}", file=out)
        for path in retention.used_evicted:
            print(f"    used       {path}", file=out)


def _discard(result: answers.SleepDiscardAnswer, args: argparse.Namespace, out: TextIO) -> None:
    print(
        f"{result.run_id} discarded: its branch at {result.head[:12]} is "
        "deleted; main is unchanged",
        file=out,
    )


def _status(result: answers.SleepStatusAnswer, args: argparse.Namespace, out: TextIO) -> None:
    if not result.run_id:
        print("no sleep run yet", file=out)
        return
    merged = "merged" if result.merged else "awaiting review"
    print(f"{result.run_id} ({merged}), {len(result.runs)} run(s)", file=out)
    for phase, counts in result.phases.items():
        print(f"  {phase:<20} {_counts(counts)}", file=out)


show_report = typed(lambda: answers.RunReport, _report)
show_plan = typed(lambda: answers.SleepPlanAnswer, _plan)
show_review = typed(lambda: answers.SleepReviewAnswer, _review)
show_discard = typed(lambda: answers.SleepDiscardAnswer, _discard)
show_status = typed(lambda: answers.SleepStatusAnswer, _status)
show_merge = typed(lambda: merge_report.MergeReport, _merge)


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
