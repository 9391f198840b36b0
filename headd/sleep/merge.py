"""Landing a run on main: replayed onto main's tip when main moved, judged by two gates, then a
compare-and-swap of main (the work tree follows when main is checked out).

base = main now, landed = main with the run's changes. When main has not moved since the run
started, landed is the run's tip (main fast-forwards and keeps every phase commit). When it has,
the run's changes are replayed path by path onto the tip as one commit carrying the run's trailer
and ``Headd-Replayed-From``; a path both sides changed refuses the merge, and nothing moves,
except the usage sidecar, whose rows merge by the state import's rule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, date, datetime

import pygit2
from msgspec.structs import replace

from headd.errors import GitFailure
from headd.head.gate import gate_heads
from headd.head.indexes import IndexedView
from headd.head.retention_gate import gate_retention
from headd.memfile.archive import original_path
from headd.memfile.sidecar import STATE_SIDECAR_PATH
from headd.remote.replay import REPLAYED_TRAILER, merge_sidecar_entries
from headd.sleep.branch import MAIN, MERGED_PREFIX, is_merged, phase_commits, run_base, run_ref
from headd.sleep.catalog import RUN_TRAILER, SKIP_GATE_TRAILER
from headd.sleep.merge_report import MergeReport
from headd.sleep.run import usage_at
from headd.store import git_io

log = logging.getLogger(__name__)

#: Phases whose commits may archive memories, and the counts that declare how many.
EVICTING: Mapping[str, tuple[str, ...]] = {
    "dedup-merge": ("folded",),
    "retention-triage": ("evicted",),
    "reprieve": ("evicted",),
}


def archive_moves(repo: pygit2.Repository, parent: str, commit: str) -> set[str]:
    """Paths a commit archived: removed, with an archive path of theirs added in the same commit."""
    changed = git_io.changed_paths(repo, parent, commit)
    added = {p for p in changed if git_io.blob_at(repo, parent, p) is None}
    removed = {p for p in changed if git_io.blob_at(repo, commit, p) is None}
    origins = {original_path(p) for p in added if p.startswith("archive/")}
    return {p for p in removed if p in origins}


def declared_evictions(repo: pygit2.Repository, run_id: str, tip: str) -> set[str]:
    """The archives the run's phases declared: each of a phase commit's archive moves, when the
    phase is one that evicts and its Memhtml-Counts account for at least that many."""
    declared: set[str] = set()
    for commit in phase_commits(repo, run_id, tip):
        parents = repo[commit.sha].peel(pygit2.Commit).parents
        if not parents:
            continue
        moves = archive_moves(repo, str(parents[0].id), commit.sha)
        keys = EVICTING.get(commit.phase)
        if keys is None:
            continue
        if len(moves) <= sum(int(commit.counts.get(key, 0)) for key in keys):
            declared |= moves
    return declared


def _replay(repo: pygit2.Repository, run_id: str, base: str, tip: str, onto: str) -> str:
    changed = git_io.changed_paths(repo, base, tip)
    blobs = {path: git_io.blob_at(repo, tip, path) for path in sorted(changed)}
    if STATE_SIDECAR_PATH in changed & git_io.changed_paths(repo, base, onto):
        # both sides exported usage: the rows merge as `headctl state import` merges them
        merged = merge_sidecar_entries(
            git_io.read_text(repo, tip, STATE_SIDECAR_PATH) or "",
            git_io.read_text(repo, onto, STATE_SIDECAR_PATH) or "",
        )
        blobs[STATE_SIDECAR_PATH] = str(repo.create_blob(merged.encode("utf-8")))
    who = git_io.signature(repo, datetime.now(UTC))
    message = (
        f"sleep: {run_id} replayed onto main\n\n{RUN_TRAILER}: {run_id}\n"
        f"{REPLAYED_TRAILER}: {tip}\n"
    )
    return git_io.write_commit_of_blobs(repo, onto, blobs, message, who, who)


def _skip_gate_commit(repo: pygit2.Repository, run_id: str, landed: str) -> str:
    """An empty commit on ``landed`` that records the skipped gate in main's history."""
    who = git_io.signature(repo, datetime.now(UTC))
    message = f"sleep: {run_id} merged with the gate skipped\n\n{SKIP_GATE_TRAILER}: {run_id}\n"
    return git_io.write_commit_of_blobs(repo, landed, {}, message, who, who)


def merge_run(
    repo: pygit2.Repository,
    run_id: str,
    *,
    versions: Callable[[str], IndexedView],
    today: date,
    skip_gate: bool = False,
    live_usage: Mapping[str, object] | None = None,
    lock: AbstractContextManager[object] | None = None,
    main: str = MAIN,
) -> MergeReport:
    """Land ``run_id`` on ``main`` if both gates pass (or ``skip_gate``); never moves anything
    otherwise. ``lock`` is held around the swap (the daemon's commit lock)."""
    _, tip = run_ref(repo, run_id)
    base = run_base(repo, run_id, tip)
    main_tip = git_io.resolve_ref(repo, main)
    if main_tip is None:
        raise GitFailure(f"{main} does not exist", {"ref": main})
    report = MergeReport(run_id, base, main_tip, skipped_gate=skip_gate)
    if tip == base:
        return replace(report, reason="the run changed nothing")
    if is_merged(repo, run_id, tip, main):
        return replace(report, reason="already on main")
    replayed = main_tip != base
    if replayed:
        overlap = sorted(
            git_io.changed_paths(repo, base, tip) & git_io.changed_paths(repo, base, main_tip)
        )
        conflicts = [path for path in overlap if path != STATE_SIDECAR_PATH]
        if conflicts:
            reason = "main changed a path the run also changed"
            return replace(report, replayed=True, conflicts=conflicts, reason=reason)
        landed = _replay(repo, run_id, base, tip, main_tip)
    else:
        landed = tip
    if skip_gate:
        log.warning("sleep merge %s: the gates are skipped", run_id)
        landed = _skip_gate_commit(repo, run_id, landed)
    report = replace(report, landed=landed, replayed=replayed)
    if not skip_gate:
        before, after = versions(main_tip), versions(landed)
        usage: dict[str, object] = dict(usage_at(repo, main_tip))
        usage.update(live_usage or {})
        report = replace(
            report,
            head_gate=gate_heads(before, after),
            retention_gate=gate_retention(
                before,
                after,
                declared=declared_evictions(repo, run_id, tip),
                usage=usage,
                today=today,
            ),
        )
        if not (report.head_gate and report.head_gate.passed) or not (
            report.retention_gate and report.retention_gate.passed
        ):
            return replace(report, reason="a gate refused the landing")
    with lock if lock is not None else nullcontext():
        moved = _land(repo, main, main_tip, landed, run_id)
    if not moved:
        reason = "main moved, or the work tree holds edits to the run's paths; merge again"
        return replace(report, reason=reason)
    git_io.set_ref(repo, MERGED_PREFIX + run_id, landed)
    return replace(report, merged=True)


def _land(repo: pygit2.Repository, main: str, expected: str, landed: str, run_id: str) -> bool:
    """Swap main to ``landed``; bring the work tree along when main is checked out."""
    paths = sorted(git_io.changed_paths(repo, expected, landed))
    follow = git_io.head_branch(repo) == main
    if follow and git_io.dirty_paths(repo, expected, paths):
        return False
    if not git_io.swap_ref(repo, main, landed, expected, f"headd: sleep merge {run_id}"):
        return False
    if follow:
        git_io.move_worktree(repo, expected, landed, paths)
    return True
