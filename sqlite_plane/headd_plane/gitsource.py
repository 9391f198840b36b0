"""The indexer's view of git, through pygit2: HEAD, the tree, blobs, a diff and the dirty paths.

An update after one commit must not cost a walk of the whole tree: :meth:`GitSource.changes`
reads only the subtrees whose ids differ (``headd.head.version.changed_blobs``) and
:meth:`GitSource.blob_sha_at` looks one path up, so a one-file commit at 10,000 files reads a
handful of trees. Only a change set that could hold a rename (a path gone and another come) pays
for libgit2's whole-tree diff with similarity detection, so the result is ``diff``'s exactly.

:meth:`GitSource.dirty` names the work-tree files the index must read instead of HEAD's: the
paths libgit2's status does not call current, less those whose file holds HEAD's very blob
(whatever git's index says: the daemon writes the index entries of its commits after it answers,
so right after a commit the index lags and the file is HEAD's). The whole status costs one lstat
per tracked file (most of the 50 ms an update may take at 10,000 files), and libgit2 holds the
interpreter's lock for all of it. Under the daemon, :meth:`GitSource.watch_work_tree` has inotify
(:mod:`headd_plane.dirty_watch`) name the paths touched since the last call, and only those are
looked at (plus the paths that were not current, and those HEAD or the index moved): a file that
holds HEAD's blob by its hash, a path nothing holds by three lookups, and git asked about the
rest one path at a time; whenever the watch cannot vouch for its list, or the rest is long, the
whole status again.

Thin I/O wrappers, each returning plain values. A git failure becomes
:class:`headd.errors.GitFailure` naming the operation; git's own text (which can carry paths
or hunks) goes to the log, not into the error.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pygit2

from headd.errors import GitFailure
from headd.git_cache import cache_large_trees
from headd.memfile.vocabulary import PARA_BUCKETS
from headd.paths import normalize_path
from headd.symlinks import worktree_symlink

if TYPE_CHECKING:
    from .dirty_watch import DirtyWatch, Touched

log = logging.getLogger(__name__)

GENERATED_NAMES = ("index.html", "sitemap.xml")

#: Asking git about one path costs about a hundred times what the whole status costs per tracked
#: file (more in a directory of thousands of entries, which libgit2 lists whole): past this many
#: paths to ask about (16, or one per 500 tracked files), the whole status is the cheaper one.
CANDIDATES_MIN = 16
CANDIDATES_PER = 500
#: Hashing a candidate's file against HEAD's blob costs about ten times the whole status's share
#: per tracked file (a read and a hash, 20–40 µs for a memory), and unlike the whole status it
#: lets the interpreter's lock go between paths: past this many candidates (64, or one per 10
#: tracked files), the whole status is asked at once.
SCREENED_MIN = 64
SCREENED_PER = 10
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


@dataclass(frozen=True, slots=True)
class _Scanned:
    """The last status :meth:`GitSource.dirty` took under a watch: against which HEAD, and the
    raw flags of every path that was not current."""

    head: str
    flags: dict[str, int]


def _fail(operation: str, error: BaseException) -> GitFailure:
    log.error("git.%s failed: %s: %s", operation, type(error).__name__, error)
    return GitFailure(f"git failure during {operation}", {"operation": operation})


def _has_file(tree: pygit2.Tree, path: str) -> bool:
    """Whether ``tree`` holds something other than a directory at ``path``."""
    try:
        return tree[path].type_str != "tree"
    except (KeyError, ValueError):
        return False


class GitSource:
    """One repository with a work tree."""

    def __init__(self, store: Path | str) -> None:
        cache_large_trees()
        try:
            self.repo = pygit2.Repository(str(store))
        except (pygit2.GitError, KeyError) as error:
            raise _fail("open", error) from None
        workdir = self.repo.workdir
        self.workdir = Path(workdir) if workdir else None
        self._watch: DirtyWatch | None = None
        self._last: _Scanned | None = None

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

    def blob_sha_at(self, commit_sha: str, path: str) -> str | None:
        """The blob at ``path`` in ``commit_sha`` (None: absent, or not a blob), by one lookup."""
        try:
            tree = self.repo[commit_sha].peel(pygit2.Tree)
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("ls-tree", error) from None
        try:
            entry = tree[path]
        except (KeyError, ValueError):
            return None
        return str(entry.id) if entry.type_str == "blob" else None

    def blob(self, sha: str) -> bytes:
        """The blob's bytes, read from the object database directly (no Blob object between,
        about 40 % less CPU per blob, as in the head's load)."""
        try:
            kind, data = self.repo.odb.read(sha)
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("cat-file", error) from None
        if kind != pygit2.enums.ObjectType.BLOB:
            raise _fail("cat-file", ValueError(f"not a blob: {sha}"))
        return bytes(data)

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

    def changes(self, from_sha: str, to_sha: str) -> list[DiffEntry]:
        """What :meth:`diff` returns, read from the subtrees that differ only.

        A rename needs a path that went and one that came; when the change set has no such
        pair, each path is an add, a modification or a delete by whether it exists on either
        side, and that is what libgit2 reports too. Otherwise this is :meth:`diff` itself.
        """
        from headd.head.version import changed_blobs  # the head's subtree-skipping differ

        try:
            old = self.repo[from_sha].peel(pygit2.Tree)
            new = self.repo[to_sha].peel(pygit2.Tree)
            blobs = changed_blobs(self.repo, old, new)
        except (pygit2.GitError, KeyError, ValueError) as error:
            raise _fail("diff", error) from None
        out: list[DiffEntry] = []
        went = came = False
        for path in sorted(blobs):
            if blobs[path] is None:
                out.append(DiffEntry("D", path))
                went = True
            elif _has_file(old, path):
                out.append(DiffEntry("M", path))
            else:
                out.append(DiffEntry("A", path))
                came = True
            if went and came:
                return self.diff(from_sha, to_sha)
        return out

    # -- the dirty work tree --------------------------------------------------------------------

    def watch_work_tree(self) -> bool:
        """Follow the work tree through inotify from now on (the daemon's long-lived plane), so
        :meth:`dirty` asks git about the paths touched since the last call instead of lstat()ing
        every file; False (and the full scan as before) where no watch can be had."""
        if self.workdir is None:
            return False
        if self._watch is None:
            from .dirty_watch import start_watch

            self._watch = start_watch(self.workdir, Path(self.repo.path))
            self._last = None
        return self._watch is not None

    def unwatch_work_tree(self) -> None:
        if self._watch is not None:
            self._watch.close()
        self._watch = None
        self._last = None

    def dirty(self) -> list[StatusEntry]:
        """Uncommitted changes (staged or not) against HEAD, but a file that holds HEAD's blob;
        ignored and conflicted dropped."""
        if self.workdir is None:
            return []
        touched = self._watch.take() if self._watch is not None else None
        flags_by_path: dict[str, int] | None = None
        if touched is not None and self._last is not None:
            flags_by_path = self._status_of_candidates(self._last, touched)
        if flags_by_path is None:
            flags_by_path = self._status_of_all(record=self._watch is not None)
        skip = pygit2.enums.FileStatus.IGNORED | pygit2.enums.FileStatus.CONFLICTED
        tree = self._head_tree()
        out: list[StatusEntry] = []
        for path, flags in sorted(flags_by_path.items()):
            if flags & skip or flags == pygit2.enums.FileStatus.CURRENT:
                continue
            if worktree_symlink(self.workdir, path) is not None:
                # Never read memory text through a link: it may point outside the store. The
                # path keeps its committed version, if it has one.
                log.info("work tree: %s goes through a symbolic link; not indexed from it", path)
                continue
            if self._holds_head_blob(tree, path):
                continue
            out.append(StatusEntry(path, not (self.workdir / path).is_file()))
        return out

    def _head_tree(self) -> pygit2.Tree | None:
        head = self._head_or_none()
        if head is None:
            return None
        try:
            return self.repo[head].peel(pygit2.Tree)
        except (pygit2.GitError, KeyError, ValueError):
            return None

    def _holds_head_blob(self, tree: pygit2.Tree | None, path: str) -> bool:
        """Whether the work tree's file at ``path`` is a regular file, reached through no
        symbolic link, whose bytes are HEAD's blob at ``path`` (hashed as they are, as the
        indexer reads them)."""
        if tree is None or self.workdir is None:
            return False
        try:
            entry = tree[path]
        except (KeyError, ValueError):
            return False
        if entry.type_str != "blob" or entry.filemode == pygit2.enums.FileMode.LINK:
            return False
        if worktree_symlink(self.workdir, path) is not None:
            return False
        full = self.workdir / path
        try:
            if not stat.S_ISREG(os.lstat(full).st_mode):
                return False
            return bool(pygit2.hashfile(str(full)) == entry.id)
        except (OSError, pygit2.GitError):
            return False

    def _head_or_none(self) -> str | None:
        try:
            return None if self.repo.head_is_unborn else str(self.repo.head.target)
        except (pygit2.GitError, KeyError):
            return None

    def _status_of_all(self, record: bool) -> dict[str, int]:
        """libgit2's whole status (one lstat per tracked file); with ``record``, kept as the
        ground the next :meth:`_status_of_candidates` builds on."""
        head = self._head_or_none()
        try:
            flags_by_path = {path: int(flags) for path, flags in self.repo.status().items()}
        except pygit2.GitError as error:
            raise _fail("status", error) from None
        self._last = None
        if record and head is not None:
            found = {p: f for p, f in flags_by_path.items() if f != pygit2.enums.FileStatus.CURRENT}
            # a directory entry (a nested repository) has no per-file status: scan in full again
            if not any(path.endswith("/") for path in found):
                self._last = _Scanned(head, found)
        return flags_by_path

    def _status_of_candidates(self, last: _Scanned, touched: Touched) -> dict[str, int] | None:
        """The status :meth:`_status_of_all` would give, asking git only about the paths whose
        status can have changed since ``last``: those not current then, those touched in the
        work tree since, those whose HEAD blob changed, and, when the index file was
        rewritten, those whose index entry differs from HEAD. None: do the full scan."""
        head = self._head_or_none()
        if head is None:
            return None
        from headd.head.version import changed_blobs

        candidates = set(last.flags) | touched.paths
        try:
            tree = self.repo[head].peel(pygit2.Tree)
            if head != last.head:
                old = self.repo[last.head].peel(pygit2.Tree)
                candidates.update(changed_blobs(self.repo, old, tree))
            index = self.repo.index
            index.read(False)  # what status_file compares against, reloaded only if rewritten
            if touched.index_changed:
                for delta in index.diff_to_tree(tree).deltas:
                    candidates.add(delta.old_file.path)
                    candidates.add(delta.new_file.path)
            if len(candidates) > max(SCREENED_MIN, len(index) // SCREENED_PER):
                return None  # a checkout's worth of paths: one scan is cheaper
            asked = [path for path in candidates if self._worth_asking(tree, index, path)]
            if len(asked) > max(CANDIDATES_MIN, len(index) // CANDIDATES_PER):
                return None
            found: dict[str, int] = {}
            ignored = pygit2.enums.FileStatus.IGNORED
            for path in asked:
                try:
                    flags = int(self.repo.status_file(path)) & ~ignored
                except KeyError:
                    continue  # neither in HEAD, the index nor the work tree
                if flags != pygit2.enums.FileStatus.CURRENT:
                    found[path] = flags
        except (pygit2.GitError, ValueError) as error:
            log.info("status of %d candidates failed, scanning all: %s", len(candidates), error)
            return None
        self._last = _Scanned(head, found)
        return found

    def _worth_asking(self, tree: pygit2.Tree, index: pygit2.Index, path: str) -> bool:
        """Whether git must be asked about a candidate: not when its file holds HEAD's blob
        (:meth:`dirty` drops it whatever the status), nor when it is neither in the index nor
        in HEAD and either no file holds it (a temporary file come and gone) or the ignore
        rules do (the daemon's own files under ``.memhtml/``: the status never names them)."""
        if self._holds_head_blob(tree, path):
            return False
        if path in index or _has_file(tree, path):
            return True
        assert self.workdir is not None
        return os.path.lexists(self.workdir / path) and not self.repo.path_is_ignored(path)

    def working_file(self, path: str) -> tuple[bytes, str]:
        """A work-tree file's bytes and the blob sha it would have."""
        assert self.workdir is not None
        link = worktree_symlink(self.workdir, path)
        if link is not None:
            raise GitFailure(f"{link} is a symbolic link; not read", {"path": link})
        try:
            data = (self.workdir / path).read_bytes()
        except OSError as error:
            raise _fail("read working file", error) from None
        return data, str(pygit2.hash(data))
