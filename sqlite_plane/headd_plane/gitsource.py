"""The indexer's view of git, through pygit2: HEAD, the tree, blobs, a diff and the dirty paths.

Thin I/O wrappers, each returning plain values. A git failure becomes
:class:`headd.errors.GitFailure` naming the operation; git's own text (which can carry paths
or hunks) goes to the log, not into the error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pygit2

from headd.errors import GitFailure

from .projection import PARA_BUCKETS, normalize_path

log = logging.getLogger(__name__)

GENERATED_NAMES = ("index.html", "sitemap.xml")
MEMORY_EXTENSION = ".html"


def is_indexable_path(path: str) -> bool:
    """A ``.html`` file under one of the four buckets, not a generated listing."""
    normalized = normalize_path(path)
    if not normalized.endswith(MEMORY_EXTENSION):
        return False
    segments = normalized.split("/")
    if segments[-1] in GENERATED_NAMES:
        return False
    return len(segments) > 1 and segments[0] in PARA_BUCKETS


@dataclass(frozen=True, slots=True)
class TreeEntry:
    path: str
    blob_sha: str


@dataclass(frozen=True, slots=True)
class DiffEntry:
    status: Literal["A", "M", "D", "R"]
    path: str
    from_path: str | None = None


@dataclass(frozen=True, slots=True)
class StatusEntry:
    path: str
    deleted: bool


def _fail(operation: str, error: BaseException) -> GitFailure:
    log.error("git.%s failed: %s: %s", operation, type(error).__name__, error)
    return GitFailure(f"git failure during {operation}", {"operation": operation})


class GitSource:
    """One repository with a work tree."""

    def __init__(self, store: Path | str) -> None:
        try:
            self.repo = pygit2.Repository(str(store))
        except (pygit2.GitError, KeyError) as error:
            raise _fail("open", error) from None
        workdir = self.repo.workdir
        self.workdir = Path(workdir) if workdir else None

    def head_sha(self) -> str:
        try:
            return str(self.repo.head.target)
        except (pygit2.GitError, KeyError) as error:
            raise _fail("rev-parse HEAD", error) from None

    def tree_entries(self, commit_sha: str) -> list[TreeEntry]:
        """Every indexable blob at ``commit_sha``, in git tree order (``ls-tree -r`` order)."""
        try:
            tree = self.repo[commit_sha].peel(pygit2.Tree)
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("ls-tree", error) from None
        out: list[TreeEntry] = []

        def walk(node: pygit2.Tree, prefix: str) -> None:
            for entry in node:
                name = entry.name or ""
                path = f"{prefix}{name}"
                if entry.type_str == "tree":
                    if prefix == "" and name not in PARA_BUCKETS:
                        continue
                    walk(self.repo[entry.id].peel(pygit2.Tree), f"{path}/")
                elif entry.type_str == "blob" and is_indexable_path(path):
                    out.append(TreeEntry(path, str(entry.id)))

        walk(tree, "")
        return out

    def blob(self, sha: str) -> bytes:
        try:
            return bytes(self.repo[sha].peel(pygit2.Blob).data)
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("cat-file", error) from None

    def diff(self, from_sha: str, to_sha: str) -> list[DiffEntry]:
        """``git diff --name-status -M`` between two commits; a copy is an add."""
        try:
            old = self.repo[from_sha].peel(pygit2.Tree)
            new = self.repo[to_sha].peel(pygit2.Tree)
            diff = old.diff_to_tree(new)
            diff.find_similar()
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("diff", error) from None
        out: list[DiffEntry] = []
        for delta in diff.deltas:
            status = delta.status_char()
            new_path = delta.new_file.path
            old_path = delta.old_file.path
            if status == "R":
                out.append(DiffEntry("R", new_path, old_path))
            elif status in ("A", "C"):
                out.append(DiffEntry("A", new_path))
            elif status == "D":
                out.append(DiffEntry("D", old_path))
            elif status in ("M", "T"):
                out.append(DiffEntry("M", new_path))
        return out

    def dirty(self) -> list[StatusEntry]:
        """Uncommitted changes (staged or not) against HEAD; ignored and conflicted dropped."""
        if self.workdir is None:
            return []
        try:
            flags_by_path = self.repo.status()
        except pygit2.GitError as error:
            raise _fail("status", error) from None
        skip = pygit2.enums.FileStatus.IGNORED | pygit2.enums.FileStatus.CONFLICTED
        out: list[StatusEntry] = []
        for path, flags in sorted(flags_by_path.items()):
            if flags & skip or flags == pygit2.enums.FileStatus.CURRENT:
                continue
            out.append(StatusEntry(path, not (self.workdir / path).is_file()))
        return out

    def working_file(self, path: str) -> tuple[bytes, str]:
        """A work-tree file's bytes and the blob sha it would have."""
        assert self.workdir is not None
        try:
            data = (self.workdir / path).read_bytes()
        except OSError as error:
            raise _fail("read working file", error) from None
        return data, str(pygit2.hash(data))
