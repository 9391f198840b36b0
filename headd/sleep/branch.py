"""A sleep run's branch read back: its trailers, its base, its phase commits, its id.

The trailers are the truth about what a run did (memhtml's rule: ``resume`` reads
``Memhtml-Phase`` from the branch), so everything that asks about a run after the fact —
``resume``, ``review``, ``status``, the merge's declared evictions — reads it here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import msgspec
import pygit2

from headd.errors import InvalidParams
from headd.sleep.catalog import COUNTS_TRAILER, PHASE_TRAILER, RUN_TRAILER
from headd.store import git_io

BRANCH_PREFIX = "refs/heads/"
MAIN = "refs/heads/main"
#: ``refs/headd/sleep-merged/<run id>`` → the commit a merge landed (a replay is not the branch's
#: tip, so ancestry alone cannot tell a replayed run merged).
MERGED_PREFIX = "refs/headd/sleep-merged/"
#: What ``branch_for`` names, and the only run ids a caller may pass.
RUN_ID = re.compile(r"sleep/\d{4}-\d{2}-\d{2}(?:-[1-9]\d{0,5})?")


def phase_message(run_id: str, phase: str, counts: Mapping[str, int]) -> str:
    """A phase commit's message: a subject, then the three trailers."""
    summary = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no counts"
    encoded = json.dumps(dict(counts), separators=(",", ":"), sort_keys=True)
    return (
        f"sleep({phase}): {summary}\n\n"
        f"{RUN_TRAILER}: {run_id}\n{PHASE_TRAILER}: {phase}\n{COUNTS_TRAILER}: {encoded}\n"
    )


def trailers_of(message: str) -> dict[str, str]:
    """``Key: value`` lines of a commit message (the last occurrence of a key wins)."""
    out: dict[str, str] = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            out[key] = value.strip()
    return out


class PhaseCommit(msgspec.Struct, frozen=True):
    sha: str
    phase: str
    counts: dict[str, int]


def run_base(repo: pygit2.Repository, run_id: str, branch_sha: str) -> str:
    """Where a run started: the parent of its first trailered commit, else the tip itself."""
    base = branch_sha
    for commit in _walk_run(repo, run_id, branch_sha):
        base = str(commit.parents[0].id) if commit.parents else base
    return base


def _walk_run(repo: pygit2.Repository, run_id: str, tip: str) -> list[pygit2.Commit]:
    """The run's own commits, newest first: first parents while each carries Memhtml-Phase and
    this run's Memhtml-Run. An earlier run that fast-forwarded main is below a later run's
    branch, trailers and all; its commits are not the later run's."""
    out = []
    commit = repo[tip].peel(pygit2.Commit)
    while True:
        trailers = trailers_of(commit.message)
        if PHASE_TRAILER not in trailers or trailers.get(RUN_TRAILER) != run_id:
            break
        out.append(commit)
        if not commit.parents:
            break
        commit = commit.parents[0]
    return out


def phase_commits(repo: pygit2.Repository, run_id: str, tip: str) -> list[PhaseCommit]:
    """The run's phase commits, oldest first, read from their trailers."""
    out = []
    for commit in reversed(_walk_run(repo, run_id, tip)):
        trailers = trailers_of(commit.message)
        try:
            counts = json.loads(trailers.get(COUNTS_TRAILER, "{}"))
        except json.JSONDecodeError:
            counts = {}
        out.append(PhaseCommit(str(commit.id), trailers[PHASE_TRAILER], counts))
    return out


def run_ids(repo: pygit2.Repository) -> list[str]:
    """Every ``sleep/…`` branch, oldest name first."""
    return sorted(
        name[len(BRANCH_PREFIX) :]
        for name in repo.references
        if name.startswith(BRANCH_PREFIX + "sleep/")
    )


def run_ref(repo: pygit2.Repository, run_id: str) -> tuple[str, str]:
    """The run's ref and tip; InvalidParams when no such run."""
    if RUN_ID.fullmatch(run_id) is None:
        raise InvalidParams(
            f"not a sleep run id (sleep/YYYY-MM-DD, or with -N): {run_id[:100]!r}",
            {"run": run_id[:100]},
        )
    ref = BRANCH_PREFIX + run_id
    tip = git_io.resolve_ref(repo, ref)
    if tip is None:
        raise InvalidParams(f"no sleep run {run_id}", {"run": run_id})
    return ref, tip


def is_merged(repo: pygit2.Repository, run_id: str, tip: str, main: str = MAIN) -> bool:
    """Whether the run's changes are on main: its tip, or the commit its merge landed."""
    main_tip = git_io.resolve_ref(repo, main)
    if main_tip is None:
        return False
    landed = git_io.resolve_ref(repo, MERGED_PREFIX + run_id)
    return any(
        sha is not None and git_io.is_ancestor(repo, sha, main_tip)
        for sha in (landed, tip if tip != run_base(repo, run_id, tip) else None)
    )
