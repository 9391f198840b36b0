"""A sleep run thrown away: its review branch deleted, main never touched.

A run lives only on its ``sleep/<date>`` branch until a merge lands it, so discarding it is
deleting that ref, with a compare-and-swap: the tip read when the call began is the one deleted,
and a branch a resume moved in between is left as it is (a ``WriteConflict``: look again, then
decide). A merged run is refused: its changes are on main, and its branch is the record of what
landed.
"""

from __future__ import annotations

import pygit2

from headd.errors import GitFailure, SleepRunMerged, WriteConflict
from headd.sleep.branch import MAIN, is_merged, run_base, run_ref
from headd.wire.answers import SleepDiscardAnswer


def discard_run(repo: pygit2.Repository, run_id: str, main: str = MAIN) -> SleepDiscardAnswer:
    """Delete ``run_id``'s branch if it still points where it did and is not merged.

    ``InvalidParams`` for an id that names no run, ``SleepRunMerged`` for a run on main,
    ``WriteConflict`` when the branch moved while this ran.
    """
    ref, tip = run_ref(repo, run_id)
    base = run_base(repo, run_id, tip)
    if is_merged(repo, run_id, tip, main):
        raise SleepRunMerged(
            f"sleep run {run_id} is merged: its changes are on main", {"run": run_id, "head": tip}
        )
    if not _delete_if(repo, ref, tip):
        raise WriteConflict(
            f"sleep run {run_id} moved while it was being discarded; review it again",
            {"run": run_id, "expected": tip},
        )
    return SleepDiscardAnswer(run_id=run_id, head=tip, base=base)


def _delete_if(repo: pygit2.Repository, ref: str, expected: str) -> bool:
    """Delete ``ref`` only if it still points at ``expected``. libgit2's delete compares the value
    the reference was read with under the ref's lock, so a writer in between makes it fail."""
    try:
        reference = repo.references[ref]
    except KeyError:
        return False
    if str(reference.target) != expected:
        return False
    try:
        reference.delete()
    except pygit2.GitError as exc:
        if "modified" in str(exc) or "does not match" in str(exc):
            return False
        raise GitFailure(f"deleting {ref} failed: {exc}", {"ref": ref}) from exc
    return True
