"""The refs that keep local work reachable while it travels, and the conflicts it met.

Before a local commit is replaced by its replay on a newer remote tip, the commit is kept under
``refs/headd/rescue/<sha>``; the ref is dropped only once a push that carries the replay has been
accepted by the remote. A crash anywhere in between leaves the ref, and the next round replays it
again: replaying is idempotent (a change the tip already holds is skipped), so a rescue can be
replayed any number of times without writing anything twice.

A path that both sides changed since their common base keeps the remote's version in the tree;
ours stays reachable under ``refs/headd/conflicts/<n>`` (the local commit that held it) and is
listed in ``status.remote.conflicts`` until someone resolves it: by writing the version they
want (the conflict clears itself when the tip holds our blob again) or with ``headctl sync
--resolve PATH``. Both ref families live only in this repository: the push sends the branch alone.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import msgspec
import pygit2

from headd.store import git_io
from headd.wire.remote_answers import Conflict

log = logging.getLogger(__name__)

RESCUE_PREFIX = "refs/headd/rescue/"
CONFLICT_PREFIX = "refs/headd/conflicts/"


def rescues(repo: pygit2.Repository) -> dict[str, str]:
    """Every rescue ref and the commit it keeps."""
    out = {}
    for name in repo.references:
        if name.startswith(RESCUE_PREFIX):
            sha = git_io.resolve_ref(repo, name)
            if sha is not None:
                out[name] = sha
    return out


def keep(repo: pygit2.Repository, sha: str) -> str:
    """Keep ``sha`` reachable under a rescue ref (idempotent); return the ref's name."""
    name = RESCUE_PREFIX + sha
    git_io.set_ref(repo, name, sha)
    return name


def drop(repo: pygit2.Repository, names: set[str]) -> None:
    for name in names:
        try:
            repo.references.delete(name)
        except (KeyError, pygit2.GitError) as exc:
            log.warning("could not drop %s: %s", name, exc)


class ConflictBook:
    """The conflicts of one store, in ``.memhtml/headd/remote/conflicts.json`` beside their refs.

    The file is headd's own (never committed, never travels); a conflict whose ref is gone is
    forgotten, so deleting a ref by hand also resolves it.
    """

    def __init__(self, store: Path) -> None:
        self.file = store / ".memhtml" / "headd" / "remote" / "conflicts.json"

    def _read(self) -> list[Conflict]:
        try:
            raw = self.file.read_bytes()
        except FileNotFoundError:
            return []
        try:
            return msgspec.json.decode(raw, type=list[Conflict])
        except msgspec.DecodeError:
            log.warning("%s does not parse; conflicts are listed from their refs only", self.file)
            return []

    def _write(self, conflicts: list[Conflict]) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_name(self.file.name + ".tmp")
        tmp.write_bytes(json.dumps([msgspec.to_builtins(c) for c in conflicts], indent=1).encode())
        os.replace(tmp, self.file)

    def open(self, repo: pygit2.Repository) -> list[Conflict]:
        """The conflicts still unresolved: their ref exists and the tip does not hold ours."""
        return [c for c in self._read() if git_io.resolve_ref(repo, c.ref) is not None]

    def add(self, repo: pygit2.Repository, path: str, ours: str, theirs: str, at: str) -> Conflict:
        conflicts = self.open(repo)
        for existing in conflicts:
            if existing.path == path and existing.ours == ours:
                return existing
        taken = {c.id for c in conflicts}
        number = 1
        while str(number) in taken:
            number += 1
        conflict = Conflict(
            id=str(number),
            path=path,
            ours=ours,
            theirs=theirs,
            ref=f"{CONFLICT_PREFIX}{number}",
            at=at,
        )
        git_io.set_ref(repo, conflict.ref, ours)
        self._write([*conflicts, conflict])
        log.warning(
            "remote conflict on %s: the remote's version stays, ours is kept at %s",
            path,
            conflict.ref,
        )
        return conflict

    def settle(self, repo: pygit2.Repository, tip: str) -> list[Conflict]:
        """Forget conflicts the tip resolved (it holds our version again); return the rest."""
        remaining = []
        for conflict in self.open(repo):
            if git_io.blob_at(repo, tip, conflict.path) == git_io.blob_at(
                repo, conflict.ours, conflict.path
            ):
                self._forget(repo, conflict)
            else:
                remaining.append(conflict)
        self._write(remaining)
        return remaining

    def resolve(self, repo: pygit2.Repository, path_or_id: str) -> list[Conflict]:
        """Mark conflicts on a path (or with an id) resolved; return the ones that were."""
        done = []
        remaining = []
        for conflict in self.open(repo):
            if path_or_id in (conflict.path, conflict.id):
                self._forget(repo, conflict)
                done.append(conflict)
            else:
                remaining.append(conflict)
        self._write(remaining)
        return done

    @staticmethod
    def _forget(repo: pygit2.Repository, conflict: Conflict) -> None:
        drop(repo, {conflict.ref})
