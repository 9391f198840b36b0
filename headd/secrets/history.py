"""``doctor --secrets``: every credential any commit of any ref ever held, not only the tip's.

A secret removed by a later commit is still in the history and in every clone and remote, so
the scan walks every commit reachable from any ref (branches, tags, rescue and conflict refs)
and from the reflogs, and reads each distinct blob once. Trees are memoized by id, so the walk
costs the distinct trees and blobs of the history, not commits × files.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from headd.errors import GitFailure
from headd.secrets.rules import Finding, scan

#: A blob larger than this is not scanned (no memory file is near it).
MAX_BLOB_BYTES = 8 * 1024 * 1024


@dataclass
class HistoryFinding:
    kind: str
    path: str
    line: int
    column: int
    blob: str
    commits: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "blob": self.blob,
            "commits": self.commits,
        }


def _tips(repo: pygit2.Repository) -> Iterator[pygit2.Oid]:
    for name in ["HEAD", *repo.references]:
        ref = repo.references.get(name)
        if ref is None:
            continue
        try:
            target = ref.peel(pygit2.Commit).id
        except (pygit2.GitError, ValueError, KeyError):
            continue
        yield target
        try:
            for entry in ref.log():
                yield entry.oid_new
        except (pygit2.GitError, ValueError, KeyError):
            continue


def reachable_commits(repo: pygit2.Repository) -> list[pygit2.Commit]:
    """Every commit any ref or reflog reaches, each once, newest first."""
    walker = repo.walk(None, pygit2.enums.SortMode.TIME)
    pushed = False
    for oid in _tips(repo):
        if not oid.raw.strip(b"\0"):
            continue
        try:
            walker.push(oid)
            pushed = True
        except (pygit2.GitError, KeyError):
            continue
    return list(walker) if pushed else []


class _Scanner:
    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.blobs: dict[pygit2.Oid, list[Finding]] = {}
        self.trees: dict[pygit2.Oid, list[tuple[str, pygit2.Oid]]] = {}

    def blob(self, oid: pygit2.Oid) -> list[Finding]:
        found = self.blobs.get(oid)
        if found is None:
            obj = self.repo[oid]
            found = []
            if isinstance(obj, pygit2.Blob) and obj.size <= MAX_BLOB_BYTES:
                data = obj.data
                if b"\0" not in data[:8000]:
                    found = scan(data.decode("utf-8", errors="replace"))
            self.blobs[oid] = found
        return found

    def tree(self, tree: pygit2.Tree) -> list[tuple[str, pygit2.Oid]]:
        """(path, blob id) of every flagged blob under ``tree``."""
        memo = self.trees.get(tree.id)
        if memo is not None:
            return memo
        out: list[tuple[str, pygit2.Oid]] = []
        for entry in tree:
            if entry.type_str == "tree":
                sub = self.repo[entry.id]
                assert isinstance(sub, pygit2.Tree)
                out.extend((f"{entry.name}/{p}", b) for p, b in self.tree(sub))
            elif entry.type_str == "blob" and self.blob(entry.id):
                out.append((str(entry.name), entry.id))
        self.trees[tree.id] = out
        return out


def scan_history(store: Path) -> list[HistoryFinding]:
    """Every credential in every blob the history holds, each with the commits that hold it
    (newest first), ordered by path, line and column."""
    try:
        repo = pygit2.Repository(str(store))
    except pygit2.GitError as exc:
        raise GitFailure(f"{store} is not a git repository: {exc}", {"store": str(store)}) from None
    scanner = _Scanner(repo)
    found: dict[tuple[str, str, int, int, str], HistoryFinding] = {}
    for commit in reachable_commits(repo):
        for path, blob in scanner.tree(commit.tree):
            for f in scanner.blob(blob):
                key = (path, str(blob), f.line, f.column, f.kind)
                entry = found.get(key)
                if entry is None:
                    entry = found[key] = HistoryFinding(f.kind, path, f.line, f.column, str(blob))
                entry.commits.append(str(commit.id))
    return sorted(found.values(), key=lambda f: (f.path, f.line, f.column, f.blob))
