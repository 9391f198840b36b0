"""What a run changed, read from git alone: per-phase counts from the trailers, the commit list,
a diff stat, and each touched memory classified (moved, folded, archived, repointed, stamped).

Reading git rather than the run's answer means a resumed run, or one made by another process,
reviews the same way; ``status`` and ``plan`` live here too, beside the reading they share.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

import pygit2

from headd.memfile.archive import original_path
from headd.memfile.head_edit import read_links, read_meta
from headd.sleep.branch import MAIN, is_merged, phase_commits, run_base, run_ids, run_ref
from headd.sleep.catalog import PHASES
from headd.sleep.run import RunReport, Versions, start_run
from headd.sleep.working import ARCHIVED, FOLDED, MOVED, REPOINTED, STAMPED
from headd.store import git_io
from headd.wire.answers import (
    DiffStat,
    ReviewCommit,
    ReviewFile,
    SleepPlanAnswer,
    SleepReviewAnswer,
    SleepStatusAnswer,
)


def _text(repo: pygit2.Repository, sha: str, path: str) -> str:
    return git_io.read_text(repo, sha, path) or ""


def classify(repo: pygit2.Repository, base: str, head: str) -> list[ReviewFile]:
    """Each memory path the run touched, by what happened to it."""
    diff = repo.diff(base, head)
    diff.find_similar()
    out: list[ReviewFile] = []
    for delta in diff.deltas:
        old, new = delta.old_file.path, delta.new_file.path
        if not old.endswith(".html"):
            continue
        if delta.status == pygit2.GIT_DELTA_RENAMED:
            if new.startswith("archive/") and original_path(new) == old:
                folded = read_meta(_text(repo, head, new), "memhtml-superseded-by")
                out.append(ReviewFile(old, FOLDED if folded else ARCHIVED, new))
            else:
                out.append(ReviewFile(old, MOVED, new))
        elif delta.status == pygit2.GIT_DELTA_MODIFIED:
            before = read_links(_text(repo, base, old))
            after = read_links(_text(repo, head, new))
            out.append(ReviewFile(old, REPOINTED if before != after else STAMPED))
        elif delta.status == pygit2.GIT_DELTA_DELETED:
            out.append(ReviewFile(old, "deleted"))
        elif delta.status == pygit2.GIT_DELTA_ADDED:
            out.append(ReviewFile(new, "added"))
    return sorted(out, key=lambda f: f.path)


def review_run(
    repo: pygit2.Repository, run_id: str, main: str = MAIN, *, diff: bool = False
) -> SleepReviewAnswer:
    _, tip = run_ref(repo, run_id)
    base = run_base(repo, run_id, tip)
    commits = phase_commits(repo, run_id, tip)
    stats = repo.diff(base, tip).stats
    merged = is_merged(repo, run_id, tip, main)
    return SleepReviewAnswer(
        run_id,
        base,
        tip,
        merged,
        {c.phase: c.counts for c in commits},
        [
            ReviewCommit(
                c.sha, c.phase, repo[c.sha].peel(pygit2.Commit).message.split("\n")[0], c.counts
            )
            for c in commits
        ],
        DiffStat(stats.files_changed, stats.insertions, stats.deletions),
        classify(repo, base, tip),
        repo.diff(base, tip).patch or "" if diff else None,
    )


def sleep_status(repo: pygit2.Repository, main: str = MAIN) -> SleepStatusAnswer:
    runs = run_ids(repo)
    if not runs:
        return SleepStatusAnswer(None, [])
    latest = max(runs, key=_run_order)
    _, tip = run_ref(repo, latest)
    base = run_base(repo, latest, tip)
    merged = is_merged(repo, latest, tip, main)
    commits = phase_commits(repo, latest, tip)
    first = repo[commits[0].sha if commits else tip].peel(pygit2.Commit)
    started = datetime.fromtimestamp(first.commit_time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return SleepStatusAnswer(
        latest,
        runs,
        base,
        tip,
        merged,
        "merged" if merged else "review",
        started,
        {c.phase: c.counts for c in commits},
    )


def _run_order(run_id: str) -> tuple[str, int]:
    """``sleep/2026-12-04-3`` after ``sleep/2026-12-04-2`` after ``sleep/2026-12-04``."""
    rest = run_id[len("sleep/") :]
    day, ordinal = rest[:10], rest[11:]
    return day, int(ordinal) if ordinal.isdigit() else 1


def plan_run(
    repo: pygit2.Repository,
    *,
    day: date,
    phases: Sequence[str] | None = None,
    versions: Versions | None = None,
) -> SleepPlanAnswer:
    """A dry run of the deterministic phases from the head: no index, nothing written."""
    report: RunReport = start_run(repo, day=day, phases=phases, dry_run=True, versions=versions)
    counts = {p.phase: p.counts for p in report.phases if p.status == "ok"}
    would = bool(report.touches)
    return SleepPlanAnswer(report.base, would, {p: counts[p] for p in PHASES if p in counts})
