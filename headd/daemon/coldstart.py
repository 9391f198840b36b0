"""The daemon's first load: from a snapshot at the tip, else one at an ancestor, else git.

Order of preference: the snapshot of the exact tip commit (decode only); else the
newest snapshot whose commit is an ancestor of the tip, decoded and advanced over the tree
difference (``advance_head``); else a full load from git. A snapshot that cannot be used
(damaged, written by other code, of a commit the repository no longer has) is logged as a
warning and the next candidate is tried, so the worst case is the git load, never a wrong answer.

:func:`plan_candidates` is the pure choice (:func:`candidates` makes it lazily: the history is
walked for an ancestor only once the tip's own snapshot was refused); :func:`cold_load` runs it
against a repository and a :class:`SnapshotStore` on the git thread.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import pygit2

from headd.errors import HeaddError

if TYPE_CHECKING:
    from headd.daemon.snapshot_store import SnapshotStore
    from headd.head.version import HeadVersion

log = logging.getLogger(__name__)

Source = Literal["snapshot", "snapshot+advance", "git"]
SNAPSHOT: Final = "snapshot"
Load = Callable[["pygit2.Repository", str], "HeadVersion"]
Advance = Callable[["pygit2.Repository", "HeadVersion", str], "HeadVersion"]
#: ``headd.head.snapshot.decode_version``: the bytes, and the commit they must be a snapshot of.
Decode = Callable[..., "HeadVersion"]
SNAPSHOT_ADVANCE: Final = "snapshot+advance"
GIT: Final = "git"


@dataclass(frozen=True, slots=True)
class ColdStart:
    """What the first load produced and how: ``source`` is what ``status.load_source`` says."""

    version: HeadVersion
    source: Source
    #: The commit of the snapshot used (None for a git load).
    snapshot_sha: str | None = None
    #: Why each refused snapshot was refused, in the order tried.
    refused: tuple[str, ...] = ()


def plan_candidates(
    stored: Sequence[str], tip: str, is_ancestor: Callable[[str], bool]
) -> list[tuple[str, Source]]:
    """The snapshots to try, in order: the tip's own, then ancestors of the tip, newest first.

    ``stored`` lists the stored snapshot commits newest first; ``is_ancestor(sha)`` says whether
    ``sha`` is an ancestor of the tip (and is only asked about shas other than the tip).
    """
    return list(candidates(stored, tip, is_ancestor))


def candidates(
    stored: Sequence[str], tip: str, is_ancestor: Callable[[str], bool]
) -> Iterator[tuple[str, Source]]:
    """:func:`plan_candidates` one at a time: an ancestor is looked for only once every candidate
    before it was refused, so the usual start (the tip's own snapshot) walks no history."""
    if tip in stored:
        yield tip, SNAPSHOT
    for sha in stored:
        if sha != tip and is_ancestor(sha):
            yield sha, SNAPSHOT_ADVANCE


def is_ancestor_in(repo: pygit2.Repository, tip: str) -> Callable[[str], bool]:
    """``sha -> bool``: is ``sha`` a commit of ``repo`` that ``tip`` descends from."""

    def check(sha: str) -> bool:
        try:
            return bool(repo.descendant_of(tip, sha))
        except (KeyError, ValueError, pygit2.GitError):
            return False  # not in this repository (history rewritten, another store)

    return check


def cold_load(
    repo: pygit2.Repository,
    tip: str,
    snapshots: SnapshotStore | None,
    *,
    load_head: Load,
    advance_head: Advance,
    decode: Decode,
    settle: Callable[[], None] | None = None,
) -> ColdStart:
    """The version at ``tip`` by the cheapest route that works (see the module docstring).

    ``snapshots`` is a ``SnapshotStore`` (or None to load from git); ``decode`` is
    ``headd.head.snapshot.decode_version``. ``settle`` runs once the version is built: the
    daemon passes ``gc.freeze``, so the cyclic collector never walks the ~10^5-10^6 long-lived
    objects of the loaded version again (an advance right after a decode would otherwise pay a
    full collection, far beyond the one-file advance's 5 ms).
    """
    # The collector stays paused for the whole cold start and ``settle`` runs before it is back
    # on: with ``gc.freeze`` as the settle the version's objects go straight to the permanent
    # generation, where re-enabling first would make the next allocation run one young
    # collection over all of them, a real share of the 0.5 s to READY.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        started = _cold_load(repo, tip, snapshots, load_head, advance_head, decode)
        if settle is not None:
            settled = time.perf_counter()
            settle()
            log.debug("settled in %.1f ms", _ms_since(settled))
    finally:
        if was_enabled:
            gc.enable()
    return started


def _cold_load(
    repo: pygit2.Repository,
    tip: str,
    snapshots: SnapshotStore | None,
    load_head: Load,
    advance_head: Advance,
    decode: Decode,
) -> ColdStart:
    refused: list[str] = []
    if snapshots is not None:
        started = time.perf_counter()
        stored = [entry.sha for entry in snapshots.entries()]
        log.debug("stored snapshots %s listed in %.1f ms", stored, _ms_since(started))
        for sha, source in candidates(stored, tip, is_ancestor_in(repo, tip)):
            log.debug("cold start tries the snapshot of %s (%s)", sha[:12], source)
            try:
                started = time.perf_counter()
                with snapshots.mapped(sha) as data:
                    if data is None:
                        raise FileNotFoundError(sha)
                    version = decode(data, expected_sha=sha)
                log.debug("snapshot %s decoded in %.1f ms", sha[:12], _ms_since(started))
                if source == SNAPSHOT_ADVANCE:
                    started = time.perf_counter()
                    version = advance_head(repo, version, tip)
                    _cut_parent(version)
                    log.debug("advanced to %s in %.1f ms", tip[:12], _ms_since(started))
            except (HeaddError, FileNotFoundError) as exc:
                reason = _describe(exc)
                log.warning("head snapshot of %s not used (%s); trying the next", sha[:12], reason)
                refused.append(f"{sha[:12]}: {reason}")
                continue
            return ColdStart(version, source, sha, tuple(refused))
    return ColdStart(load_head(repo, tip), GIT, None, tuple(refused))


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _describe(exc: BaseException) -> str:
    if isinstance(exc, HeaddError):
        return f"{exc.code}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _cut_parent(version: HeadVersion) -> None:
    """The decoded snapshot is only a stepping stone: do not keep it alive behind the tip."""
    if version.parent is not None:
        object.__setattr__(version, "parent", None)
