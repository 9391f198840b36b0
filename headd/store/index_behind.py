"""The entries of git's index that landed commits still owe it, written off the answer's path.

git's index is one file holding every tracked path (~1 MB at 10,000 memories), and libgit2
rewrites it whole on every write: about as long as the rest of a one-file commit. A commit's
answer does not need it (the tree, the branch and the work-tree files are what readers use), so
the commit path moves the files, and the index entries it owes wait here until ``flush`` writes
them in one go: when the daemon's commits pause, before any other writer of the checkout (the
commit lock's holders), and at a restart. The commits in between read the owed entries in place
of the index's (``owed``), so they need not write it first.

Crash safety: before the branch moves, the commit's moves are appended as one JSON line to
``.memhtml/headd/index-behind.jsonl`` (no fsync: a killed process loses no write, and a power cut
loses the unfsynced ref update too). A restart applies the lines whose commit is on the branch
and drops the others (a commit that never landed had its files moved back by its intent's
settlement), so ``git status`` in the store is clean again however the process died. A move
applies only while the entry still holds the old blob, so applying one twice changes nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pygit2

from headd.errors import HeaddError
from headd.store import disk, git_io
from headd.store.git_io import IndexMove

log = logging.getLogger(__name__)

FILE = Path(".memhtml") / "headd" / "index-behind.jsonl"


class _Line(msgspec.Struct, frozen=True):
    commit: str
    moves: list[tuple[str, str | None, str | None]]


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Line).decode


class IndexBehind:
    """The index moves of landed commits not yet written, and their record for a restart. Used
    under the commit lock only."""

    def __init__(self, store: Path) -> None:
        self.path = store / FILE
        self._moves: list[IndexMove] = []
        #: Each owed path's blob once its moves are written (None: absent).
        self._owed: dict[str, str | None] = {}
        self._recorded = self.path.exists()

    @property
    def pending(self) -> int:
        """How many moves wait for the next ``flush``."""
        return len(self._moves)

    @property
    def owed(self) -> Mapping[str, str | None]:
        """Path to the blob its index entry is owed (None: absent): what the commit path reads
        in place of the index's entry, so a commit need not write the index first."""
        return self._owed

    def expect(self, commit: str, moves: list[IndexMove]) -> None:
        """Record ``moves`` as owed once ``commit`` is on the branch (before the swap)."""
        if not moves:
            return
        data = _encode(_Line(commit=commit, moves=moves)) + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            what = "recording the index entries a commit owes failed"
            raise disk.storage_failure(what, exc) from exc
        self._recorded = True

    def landed(self, moves: list[IndexMove]) -> None:
        """``moves`` are owed: their commit is on the branch."""
        self._moves.extend(moves)
        for path, _before, after in moves:
            self._owed[path] = after

    def flush(self, repo: pygit2.Repository) -> None:
        """Write the owed moves into git's index in one write, then drop their record. On a
        failure (another git holds the index lock) they stay owed and the error is raised."""
        if self._moves:
            git_io.move_index(repo, self._moves)
            self._moves = []
            self._owed = {}
        if self._recorded:
            self.path.unlink(missing_ok=True)
            self._recorded = False

    def recover(self, repo: pygit2.Repository, ref: str) -> int:
        """At start: apply the recorded moves of every commit on ``ref``'s branch, drop the
        record; answers how many moves were applied."""
        if not self._recorded:
            return 0
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            log.warning("could not read %s: %s", self.path, exc)
            return 0
        tip = git_io.resolve_ref(repo, ref)
        for line in raw.splitlines():
            try:
                entry = _decode(line)
            except msgspec.DecodeError:
                continue  # a line cut by a kill: its commit never reached the swap
            if tip is not None and git_io.is_ancestor(repo, entry.commit, tip):
                self._moves.extend(entry.moves)
        moved = len(self._moves)
        try:
            self.flush(repo)
        except HeaddError as exc:
            log.warning("git's index stays behind the branch: %s", exc)
            return 0
        if moved:
            log.warning("wrote %d index entr(ies) a killed commit left owed", moved)
        return moved
