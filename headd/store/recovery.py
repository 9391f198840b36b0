"""Settle an interrupted commit: it either landed or it did not, and the log says which.

The commit path writes an ``Intent`` (commit, parent, ref, paths, whether the checkout follows)
before it touches the working tree or the branch. A process killed anywhere after that leaves a
log ending in the intent. Settling asks git the one question that decides it: is the intent's
commit on the branch (the ref points at it or at a descendant)? If so it landed, and the session
moves onto it. If not, nothing landed; the checkout, if it had already followed, is moved back
path by path (only paths still holding the intent's version, so an edit made since is kept).

A process killed while writing one work-tree file leaves ``<path>.headd-tmp`` beside it; settling
removes those of the intent's paths.

Killed before the intent, a commit leaves only unreachable objects, which git collects; there is
nothing to settle.
"""

from __future__ import annotations

import logging

import pygit2

from headd.store import git_io
from headd.store.sessions import Intent, Settled

log = logging.getLogger(__name__)


def has_landed(repo: pygit2.Repository, intent: Intent) -> bool:
    tip = git_io.resolve_ref(repo, intent.ref)
    return tip is not None and git_io.is_ancestor(repo, intent.commit, tip)


def settle(repo: pygit2.Repository, intent: Intent, at: str, recovered: bool = True) -> Settled:
    """Decide an intent and undo a half-followed checkout; the caller logs the result."""
    landed = has_landed(repo, intent)
    if intent.worktree and repo.workdir:
        git_io.remove_temporaries(repo, intent.paths)
    if not landed and intent.worktree and git_io.head_branch(repo) == intent.ref:
        git_io.move_worktree(repo, intent.commit, intent.parent, intent.paths)
    log.info(
        "settled commit %s on %s: %s",
        intent.commit[:12],
        intent.ref,
        "landed" if landed else "not landed",
    )
    return Settled(commit=intent.commit, landed=landed, recovered=recovered, at=at)
