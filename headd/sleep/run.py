"""A sleep run: the phases over a version, one plumbing commit per phase on ``sleep/<date>``.

The branch's commits are written as objects and the branch ref moved by compare-and-swap after
each one; main, the index and the work tree are never read or written, so agents keep committing
to main while a run goes on (memhtml's run checks its branch out, and a write made meanwhile lands
on it). The trailers are the truth about what ran: ``resume`` reads them, as ``review`` and
``status`` do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime

import numpy as np
import pygit2

from headd.errors import GitFailure, InvalidParams
from headd.head.indexes import IndexedView
from headd.head.version import load_head
from headd.memfile.sidecar import STATE_SIDECAR_PATH, SidecarEntry, merge_entries, parse_sidecar
from headd.sleep.branch import (
    BRANCH_PREFIX,
    MAIN,
    phase_commits,
    phase_message,
    run_base,
    run_ids,
    run_ref,
)
from headd.sleep.catalog import (
    DEPENDENTS,
    MODEL_PHASES,
    NO_MODEL_REASON,
    NON_COMMITTING,
    PHASES,
    ModelPort,
    branch_for,
    unknown_phases,
)
from headd.sleep.phases import DETERMINISTIC, Context
from headd.sleep.working import Change, Working
from headd.store import git_io
from headd.wire.answers import PhaseReport, RunReport, TouchReport

log = logging.getLogger(__name__)


def usage_at(repo: pygit2.Repository, sha: str) -> dict[str, SidecarEntry]:
    """The committed usage rows at ``sha`` by path."""
    text = git_io.read_text(repo, sha, STATE_SIDECAR_PATH) or ""
    return {entry.path: entry for entry in parse_sidecar(text).entries}


def context_for(
    repo: pygit2.Repository,
    sha: str,
    *,
    day: date,
    run_id: str,
    live_usage: Sequence[SidecarEntry] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
) -> Context:
    usage = usage_at(repo, sha)
    if live_usage is not None:
        usage = {e.path: e for e in merge_entries(list(usage.values()), live_usage)}
    return Context(day, run_id, usage, live_usage, vectors)


#: The version at a commit: the daemon passes its follower's (cached, advanced incrementally);
#: alone, a full tree read.
Versions = Callable[[str], IndexedView]


#: Where a run hands the derived edges a phase mined: (run id, [(source, target, cosine)]).
EdgeSink = Callable[[str, list[tuple[str, str, float]]], None]


def _working_at(repo: pygit2.Repository, sha: str, versions: Versions | None) -> Working:
    version = versions(sha) if versions is not None else load_head(repo, sha)
    working = Working(version.records(), lambda blob: git_io.blob_text(repo, blob))
    sidecar = git_io.read_text(repo, sha, STATE_SIDECAR_PATH)
    if sidecar is not None:
        working.others[STATE_SIDECAR_PATH] = sidecar
    return working


def _selected(phases: Sequence[str] | None) -> tuple[str, ...]:
    if phases is None:
        return PHASES
    unknown = unknown_phases(list(phases))
    if unknown:
        raise InvalidParams(
            f"unknown sleep phase(s): {', '.join(unknown)}", {"unknown": unknown, "phases": PHASES}
        )
    return tuple(p for p in PHASES if p in set(phases))


def start_run(
    repo: pygit2.Repository,
    *,
    day: date,
    phases: Sequence[str] | None = None,
    dry_run: bool = False,
    model: ModelPort | None = None,
    live_usage: Sequence[SidecarEntry] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    main: str = MAIN,
    versions: Versions | None = None,
    edges: EdgeSink | None = None,
) -> RunReport:
    """Branch ``sleep/<day>`` (suffixed for another run that day) from main's tip and run."""
    base = git_io.resolve_ref(repo, main)
    if base is None:
        raise GitFailure(f"{main} does not exist", {"ref": main})
    run_id = branch_for(day.isoformat(), set(run_ids(repo)))
    ref = BRANCH_PREFIX + run_id
    if not dry_run and not git_io.swap_ref(repo, ref, base, None, "headd: sleep run"):
        raise GitFailure(f"{ref} appeared while the run started", {"ref": ref})
    ctx = context_for(repo, base, day=day, run_id=run_id, live_usage=live_usage, vectors=vectors)
    selected = _selected(phases)
    sink = None if dry_run else edges
    return _run(repo, run_id, ref, base, base, selected, ctx, dry_run, model, set(), versions, sink)


def resume_run(
    repo: pygit2.Repository,
    run_id: str,
    *,
    day: date,
    model: ModelPort | None = None,
    live_usage: Sequence[SidecarEntry] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    versions: Versions | None = None,
    edges: EdgeSink | None = None,
) -> RunReport:
    """Run again every phase that has no trailer on the branch, from the branch's tip."""
    ref, tip = run_ref(repo, run_id)
    done = {c.phase for c in phase_commits(repo, run_id, tip)}
    ctx = context_for(repo, tip, day=day, run_id=run_id, live_usage=live_usage, vectors=vectors)
    base = run_base(repo, run_id, tip)
    return _run(repo, run_id, ref, base, tip, PHASES, ctx, False, model, done, versions, edges)


def _run(
    repo: pygit2.Repository,
    run_id: str,
    ref: str,
    base: str,
    tip: str,
    selected: tuple[str, ...],
    ctx: Context,
    dry_run: bool,
    model: ModelPort | None,
    done: set[str],
    versions: Versions | None,
    edges: EdgeSink | None = None,
) -> RunReport:
    run_started = _stamp()
    working = _working_at(repo, tip, versions)
    blocked: dict[str, str] = {}
    reports: list[PhaseReport] = []
    touches: list[TouchReport] = []
    for ordinal, name in enumerate(PHASES, start=1):
        if name not in selected:
            continue
        if name in done:
            reports.append(PhaseReport(name, ordinal, "ok", reason="committed earlier"))
            continue
        if name in blocked:
            reports.append(PhaseReport(name, ordinal, "skipped", reason=blocked[name]))
            continue
        if name in MODEL_PHASES:
            reason = NO_MODEL_REASON if model is None else "no runner for this phase yet"
            reports.append(PhaseReport(name, ordinal, "skipped", reason=reason))
            continue
        started = _stamp()
        try:
            change = DETERMINISTIC[name](working, ctx)
            commit: str | None = None
            if not dry_run and name not in NON_COMMITTING and not change.empty:
                commit = _commit(repo, ref, tip, run_id, name, change)
                tip = commit
            working.apply(change)
            if edges is not None and change.edges:
                edges(run_id, change.edges)
        except Exception as exc:  # a phase's failure is isolated: recorded, later phases run
            log.exception("sleep %s: phase %s failed", run_id, name)
            for later in DEPENDENTS.get(name, frozenset()):
                blocked.setdefault(later, f"depends on {name}, which failed")
            reason = f"{exc}"[:500]
            reports.append(
                PhaseReport(name, ordinal, "failed", None, {}, reason, started, _stamp())
            )
            continue
        counts = dict(change.counts)
        reports.append(PhaseReport(name, ordinal, "ok", commit, counts, None, started, _stamp()))
        touches += [TouchReport(t.path, t.kind, name, t.to, t.into) for t in change.touches]
    status = "dry-run" if dry_run else "review"
    return RunReport(
        run_id, run_id, base, tip, status, dry_run, reports, touches, run_started, _stamp()
    )


def _commit(
    repo: pygit2.Repository, ref: str, parent: str, run_id: str, phase: str, change: Change
) -> str:
    who = git_io.signature(repo, _now())
    message = phase_message(run_id, phase, change.counts)
    sha = git_io.write_commit(repo, parent, change.writes, change.removes, message, who)
    if not git_io.swap_ref(repo, ref, sha, parent, f"headd: sleep {phase}"):
        raise GitFailure(f"{ref} moved during the run", {"ref": ref})
    return sha


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp() -> str:
    return _now().strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
