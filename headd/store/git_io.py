"""Thin pygit2 wrappers for the commit path: objects, the ref swap and the checked-out tree.

Everything here is I/O and nothing here decides: the commit path (``commit.py``) judges, this module
writes what it was told. Each function takes an open ``pygit2.Repository`` and raises
``GitFailure`` (never a raw ``pygit2.GitError``) so the daemon can answer ``ERR_GIT``.

Why pygit2 and not ``git`` subprocesses: one process per object costs milliseconds each, and a
commit of a few files should cost about as much as writing them. The new tree is the parent's with
only the touched directories rewritten (a ``TreeBuilder`` per ancestor of a touched path), so a
one-file commit costs a handful of small trees whatever the size of the store; reading the whole
parent tree into an index would cost several times the 50 ms a commit may take at 10,000 files.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

import pygit2

from headd.errors import GitFailure
from headd.store import disk
from headd.store.crashpoints import crash_point
from headd.symlinks import prefixes, worktree_symlink

log = logging.getLogger(__name__)

BLOB_MODE = pygit2.enums.FileMode.BLOB
TREE_MODE = pygit2.enums.FileMode.TREE
LINK_MODE = pygit2.enums.FileMode.LINK
#: No owed index entries (``dirty_paths``, ``move_checkout``).
EMPTY_OWED: Mapping[str, str | None] = {}
#: The suffix of the file a work-tree write goes through before its rename into place.
TEMP_SUFFIX = ".headd-tmp"
DEFAULT_NAME = "headd"
DEFAULT_EMAIL = "headd@localhost"


def open_repo(path: str | os.PathLike[str]) -> pygit2.Repository:
    """The repository at ``path``; ``GitFailure`` naming the store when there is none."""
    try:
        return pygit2.Repository(str(path))
    except (pygit2.GitError, KeyError) as exc:
        raise GitFailure(f"not a git repository: {path}", {"store": str(path)}) from exc


def full_ref(repo: pygit2.Repository, ref: str | None) -> str:
    """``main`` → ``refs/heads/main``; ``None`` → the branch ``HEAD`` points at."""
    if ref is None:
        head = repo.lookup_reference("HEAD")
        target = head.target
        if not isinstance(target, str):
            raise GitFailure("HEAD is detached; name the branch to follow")
        return target
    if ref.startswith("refs/"):
        return ref
    return f"refs/heads/{ref}"


def resolve_ref(repo: pygit2.Repository, ref: str) -> str | None:
    """The commit sha a ref points at, or None when it does not exist yet."""
    try:
        reference = repo.references[ref]
    except KeyError:
        return None
    return str(reference.resolve().target)


def resolve_commit(repo: pygit2.Repository, spec: str) -> str:
    """A ref name, a sha or an abbreviation to a commit sha; ``GitFailure`` when it names none."""
    try:
        obj = repo.revparse_single(spec)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise GitFailure(f"no commit named {spec!r} in the store", {"at": spec}) from exc
    return str(commit.id)


def head_branch(repo: pygit2.Repository) -> str | None:
    """The ref ``HEAD`` names symbolically, or None when detached or bare."""
    if repo.is_bare:
        return None
    target = repo.lookup_reference("HEAD").target
    return target if isinstance(target, str) else None


def is_ancestor(repo: pygit2.Repository, ancestor: str, descendant: str) -> bool:
    if ancestor == descendant:
        return True
    try:
        return bool(repo.descendant_of(descendant, ancestor))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _tree_of(repo: pygit2.Repository, sha: str) -> pygit2.Tree:
    try:
        return repo[sha].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise GitFailure(f"no tree for {sha}") from exc


def changed_paths(repo: pygit2.Repository, old_sha: str, new_sha: str) -> frozenset[str]:
    """Every path that differs between two commits' trees; a rename counts as both its paths."""
    if old_sha == new_sha:
        return frozenset()
    diff = _tree_of(repo, old_sha).diff_to_tree(_tree_of(repo, new_sha))
    out: set[str] = set()
    for delta in diff.deltas:
        out.add(delta.old_file.path)
        out.add(delta.new_file.path)
    return frozenset(out)


def blob_at(repo: pygit2.Repository, sha: str, path: str) -> str | None:
    """The blob id at ``path`` in a commit's tree, or None when absent."""
    tree = _tree_of(repo, sha)
    try:
        entry = tree[path]
    except KeyError:
        return None
    return str(entry.id) if entry.type_str == "blob" else None


def read_text(repo: pygit2.Repository, sha: str, path: str) -> str | None:
    blob = blob_at(repo, sha, path)
    if blob is None:
        return None
    return blob_text(repo, blob)


def blob_text(repo: pygit2.Repository, blob: str) -> str:
    """The UTF-8 text of the blob ``blob`` (a record's file, by its ``blob_sha``), read from the
    object database without a Blob object; ``GitFailure`` when it is not there or not text."""
    try:
        kind, data = repo.odb.read(blob)
        if kind != pygit2.enums.ObjectType.BLOB:
            raise KeyError(blob)
        return bytes(data).decode("utf-8")
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise GitFailure(f"cannot read blob {blob}", {"blob": blob}) from exc


def tree_symlink(repo: pygit2.Repository, sha: str, path: str) -> str | None:
    """The first component of ``path`` (``path`` itself included) that a commit's tree holds
    as a symbolic link, or None. A write there would go through the link, or replace it."""
    tree: pygit2.Tree = _tree_of(repo, sha)
    for prefix in prefixes(path):
        name = prefix.rsplit("/", 1)[-1]
        try:
            entry = tree[name]
        except KeyError:
            return None
        if entry.filemode == LINK_MODE:
            return prefix
        if entry.filemode != TREE_MODE:
            return None
        tree = entry.peel(pygit2.Tree)
    return None


def symlink_on(repo: pygit2.Repository, sha: str, path: str, *, worktree: bool) -> str | None:
    """A symbolic link a write of ``path`` on commit ``sha`` would meet: in the commit's tree,
    or (``worktree``: the checkout follows the commit) in the work tree; None when none."""
    found = tree_symlink(repo, sha, path)
    if found is None and worktree and repo.workdir:
        found = worktree_symlink(repo.workdir, path)
    return found


def signature(repo: pygit2.Repository, when: datetime) -> pygit2.Signature:
    """Author and committer: the store's git config identity, else ``headd``; time is ``when``."""
    config = repo.config
    name = str(config["user.name"]) if "user.name" in config else DEFAULT_NAME
    email = str(config["user.email"]) if "user.email" in config else DEFAULT_EMAIL
    offset = when.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return pygit2.Signature(name, email, int(when.timestamp()), minutes)


class _Edits:
    """The edits under one directory: files to write (blob ids) or remove, and subdirectories."""

    __slots__ = ("dirs", "files")

    def __init__(self) -> None:
        self.files: dict[str, pygit2.Oid | None] = {}
        self.dirs: dict[str, _Edits] = {}

    def at(self, path: str) -> tuple[_Edits, str]:
        """The edits of ``path``'s directory (made on the way) and its last segment."""
        *parents, name = path.split("/")
        node = self
        for segment in parents:
            node = node.dirs.setdefault(segment, _Edits())
        return node, name


def _edited_tree(
    repo: pygit2.Repository, tree: pygit2.Tree | None, edits: _Edits
) -> pygit2.Oid | None:
    """``tree`` with ``edits`` applied, rewriting only the directories they reach; None when
    the result is empty (git keeps no empty directory, as an index-built tree would not)."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, sub in edits.dirs.items():
        entry: pygit2.Object | None = builder.get(name)
        if entry is not None and entry.filemode == LINK_MODE:
            raise GitFailure(f"writing under {name!r}: it is a symbolic link", {"path": name})
        if entry is not None and entry.filemode != TREE_MODE:
            if _only_removes(sub):
                continue  # nothing to remove under a file
            entry = None  # a write under a file replaces it (insert below), as the index did
        subtree = entry.peel(pygit2.Tree) if entry is not None else None
        new = _edited_tree(repo, subtree, sub)
        if new is None:
            if entry is not None:
                builder.remove(name)
        elif entry is None or new != entry.id:
            builder.insert(name, new, TREE_MODE)
    for name, blob in edits.files.items():
        entry = builder.get(name)
        if blob is None:
            if entry is not None and entry.filemode != TREE_MODE:
                builder.remove(name)
            continue
        if entry is not None and entry.filemode == TREE_MODE:
            raise GitFailure(f"writing {name!r}: a directory of that name exists")
        if entry is not None and entry.filemode == LINK_MODE:
            raise GitFailure(f"writing {name!r}: it is a symbolic link", {"path": name})
        builder.insert(name, blob, BLOB_MODE)
    if len(builder) == 0:
        return None
    return builder.write()


def _only_removes(edits: _Edits) -> bool:
    return all(blob is None for blob in edits.files.values()) and all(
        _only_removes(sub) for sub in edits.dirs.values()
    )


def write_commit(
    repo: pygit2.Repository,
    parent: str,
    writes: Mapping[str, str],
    removes: Iterable[str],
    message: str,
    who: pygit2.Signature,
) -> str:
    """Write blobs, a tree (parent's tree with ``writes`` and ``removes`` applied) and a commit.

    A path both written and removed is written. Nothing references the commit afterwards: until
    a ref moves to it, it is an unreachable object git's gc will collect, which is why writing it
    early is harmless.
    """
    try:
        blobs: dict[str, str | None] = dict.fromkeys(removes)
        for path, html in writes.items():
            blobs[path] = str(repo.create_blob(html.encode("utf-8")))
    except pygit2.GitError as exc:
        raise disk.git_failure("writing the commit failed", exc, where=repo.path) from exc
    return write_commit_of_blobs(repo, parent, blobs, message, who, who)


def write_commit_of_blobs(
    repo: pygit2.Repository,
    parent: str,
    blobs: Mapping[str, str | None],
    message: str,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> str:
    """A commit on ``parent`` whose tree sets each path to a blob id already in the object
    database, or removes it (None). Unreachable until a ref moves to it, as ``write_commit``'s."""
    root = _tree_of(repo, parent)
    try:
        edits = _Edits()
        for path, blob in blobs.items():
            node, name = edits.at(path)
            node.files[name] = pygit2.Oid(hex=blob) if blob is not None else None
        tree = _edited_tree(repo, root, edits)
        if tree is None:
            tree = repo.TreeBuilder().write()
        commit = repo.create_commit(
            None, author, committer, message, tree, [pygit2.Oid(hex=parent)]
        )
    except pygit2.GitError as exc:
        raise disk.git_failure("writing the commit failed", exc, where=repo.path) from exc
    return str(commit)


def swap_ref(
    repo: pygit2.Repository, ref: str, new: str, expected: str | None, reflog: str
) -> bool:
    """Compare-and-swap: move ``ref`` to ``new`` only if it still points at ``expected``.

    ``expected=None`` means the ref must not exist yet (a new branch). libgit2 takes the ref's
    lock file and compares the old value under it (``set_target`` carries the value the reference
    was read with), so a writer that moved the ref in between makes this return False.
    """
    try:
        if expected is None:
            try:
                repo.references.create(ref, new, force=False)
            except pygit2.AlreadyExistsError:
                return False
            return True
        reference = _lookup(repo, ref)
        if reference is None:
            return False
        if str(reference.target) != expected:
            return False
        try:
            reference.set_target(new, reflog)
        except pygit2.GitError as exc:
            if "does not match" in str(exc) or "modified" in str(exc):
                return False
            raise
        return True
    except (pygit2.GitError, OSError) as exc:
        # A stale or held ``<ref>.lock`` reaches here as an OSError from libgit2.
        raise disk.git_failure(f"moving {ref} failed", exc, {"ref": ref}, where=repo.path) from exc


def _lookup(repo: pygit2.Repository, ref: str) -> pygit2.Reference | None:
    try:
        return repo.references[ref]
    except KeyError:
        return None


def set_ref(repo: pygit2.Repository, ref: str, new: str) -> None:
    """Force a ref (provenance refs only, never the followed branch)."""
    try:
        repo.references.create(ref, new, force=True)
    except pygit2.GitError as exc:
        raise GitFailure(f"setting {ref} failed: {exc}") from exc


# --- the checked-out working tree ---------------------------------------------------------------


def _worktree_blob(repo: pygit2.Repository, path: str) -> str | None:
    full = Path(repo.workdir) / path
    if not full.is_file() or full.is_symlink():
        return None
    return str(pygit2.hashfile(str(full)))


def _index_blob(index: pygit2.Index, path: str) -> str | None:
    return str(index[path].id) if path in index else None


def dirty_paths(
    repo: pygit2.Repository,
    base: str,
    paths: Iterable[str],
    owed: Mapping[str, str | None] = EMPTY_OWED,
) -> list[str]:
    """Of ``paths``, those whose index entry or file differ from the ``base`` commit's version.

    Staged, modified, deleted and untracked all count: the commit would overwrite them. Only
    ``paths`` are looked at (their index entries, and each file hashed), never the whole tree,
    so a stale stat cache elsewhere in the checkout costs nothing here. ``owed`` are the index
    entries landed commits still owe (path to blob, None: absent), read in place of the file's.
    """
    index = repo.index
    index.read(False)
    out = []
    for path in sorted(set(paths)):
        want = blob_at(repo, base, path)
        if _staged(index, owed, path) != want or _worktree_blob(repo, path) != want:
            out.append(path)
    return out


def _staged(index: pygit2.Index, owed: Mapping[str, str | None], path: str) -> str | None:
    """The blob ``path`` is staged at: the owed entry when there is one, else the index's."""
    return owed[path] if path in owed else _index_blob(index, path)


def _write_file(repo: pygit2.Repository, path: str, blob: str | None) -> None:
    """Write (or remove, ``blob=None``) one work-tree file, never through a symbolic link: a
    link at ``path`` or at any directory above it refuses the write (``GitFailure``)."""
    link = worktree_symlink(repo.workdir, path)
    if link is not None:
        raise GitFailure(f"{link} is a symbolic link: not writing through it", {"path": link})
    full = Path(repo.workdir) / path
    if blob is None:
        if full.exists() or full.is_symlink():
            full.unlink()
        parent = full.parent
        root = Path(repo.workdir).resolve()
        while parent.resolve() != root:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent
        return
    full.parent.mkdir(parents=True, exist_ok=True)
    tmp = full.with_name(full.name + TEMP_SUFFIX)
    tmp.write_bytes(bytes(repo[blob].read_raw()))
    crash_point("tempfile")
    os.replace(tmp, full)


def remove_temporaries(repo: pygit2.Repository, paths: Iterable[str]) -> list[str]:
    """Delete the ``<path>.headd-tmp`` files a process killed inside ``_write_file`` left
    beside ``paths`` (regular files only, never through a link); answer the ones removed."""
    removed = []
    for path in paths:
        temp = path + TEMP_SUFFIX
        if worktree_symlink(repo.workdir, temp) is not None:
            continue
        full = Path(repo.workdir) / temp
        try:
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
            full.unlink()
        except OSError:
            continue
        removed.append(temp)
    if removed:
        log.warning("removed %d temporary file(s) a killed commit left", len(removed))
    return removed


def _forget_unsaved(index: pygit2.Index) -> None:
    """Drop in-memory index edits that were not written: a repository kept open re-reads its
    index only when the file changes, so a half-done move must not linger into the next one."""
    try:
        index.read(True)
    except pygit2.GitError as exc:
        log.warning("could not re-read the index: %s", exc)


#: One path's move in git's index: (path, the blob it held, the blob it holds; None: absent).
IndexMove = tuple[str, str | None, str | None]


def move_worktree(repo: pygit2.Repository, old: str, new: str, paths: Iterable[str]) -> list[str]:
    """Bring the shared index and the files at ``paths`` from commit ``old`` to commit ``new``.

    A path is moved only while both its file and its index entry still hold ``old``'s version (or
    already hold ``new``'s, which makes this idempotent after a crash); anything else is somebody's
    uncommitted edit, left alone and returned. Paths outside ``paths`` are never touched, so
    unrelated edits survive. Used backwards by recovery, and by the writers that land outside a
    session (sleep, the remote); the commit path moves the files (``move_checkout``) and leaves
    the index to ``move_index`` off the answer's path.
    """
    skipped, moves = move_checkout(repo, old, new, paths)
    move_index(repo, moves)
    return skipped


def move_checkout(
    repo: pygit2.Repository,
    old: str,
    new: str,
    paths: Iterable[str],
    owed: Mapping[str, str | None] = EMPTY_OWED,
) -> tuple[list[str], list[IndexMove]]:
    """``move_worktree``'s files only: write each path that still holds ``old``'s version in both
    its file and its index entry (or ``new``'s already; ``owed`` entries read as in
    ``dirty_paths``) to ``new``'s; answer the paths left alone (somebody's edit) and the index
    moves the written ones owe (``move_index`` applies them)."""
    index = repo.index
    try:
        index.read(False)
        skipped: list[str] = []
        moves: list[IndexMove] = []
        for path in sorted(set(paths)):
            before = blob_at(repo, old, path)
            after = blob_at(repo, new, path)
            on_disk = _worktree_blob(repo, path)
            staged = _staged(index, owed, path)
            if on_disk not in (before, after) or staged not in (before, after):
                skipped.append(path)
                continue
            if on_disk != after:
                _write_file(repo, path, after)
            moves.append((path, before, after))
    except GitFailure:
        raise
    except (pygit2.GitError, OSError) as exc:
        raise disk.git_failure("moving the working tree failed", exc, where=repo.workdir) from exc
    if skipped:
        log.warning("working tree: left %d path(s) with local edits alone", len(skipped))
    return skipped, moves


def move_index(repo: pygit2.Repository, moves: Iterable[IndexMove]) -> None:
    """Apply ``moves`` to git's index in order, and write it once (the whole file: ~1 MB at
    10,000 paths). An entry is moved only while it holds the move's old blob (or its new one);
    one somebody staged since is theirs and stays. A path whose file holds the new blob gets
    the file's stat data (``git status`` then need not hash it); otherwise the bare entry."""
    index = repo.index
    try:
        index.read(False)
        for path, before, after in moves:
            staged = _index_blob(index, path)
            if staged not in (before, after):
                continue
            if after is None:
                if path in index:
                    index.remove(path)
                continue
            if _worktree_blob(repo, path) == after:
                index.add(path)
            else:
                index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=after), BLOB_MODE))
        index.write()
    except (pygit2.GitError, OSError) as exc:
        _forget_unsaved(index)
        raise disk.git_failure("writing git's index failed", exc, where=repo.workdir) from exc


def ensure_excluded(repo: pygit2.Repository, pattern: str) -> None:
    """Append ``pattern`` to ``.git/info/exclude`` once, so headd's own files never look dirty."""
    exclude = Path(repo.path) / "info" / "exclude"
    try:
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if pattern in existing.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if existing == "" or existing.endswith("\n") else "\n"
        with open(exclude, "a", encoding="utf-8") as fh:
            fh.write(f"{sep}{pattern}\n")
    except OSError as exc:
        log.warning("could not add %s to info/exclude: %s", pattern, exc)


# -- a store by its path (for callers that hold no repository: headctl's no-daemon commands) ----


def recent_messages(store: Path, tip: str, limit: int) -> list[tuple[str, str]]:
    """(sha, message) of the newest ``limit`` commits reachable from ``tip``, newest first;
    empty when the store or the commit cannot be read (a reader's question, never an error)."""
    out: list[tuple[str, str]] = []
    try:
        repo = pygit2.Repository(str(store))
        for count, commit in enumerate(repo.walk(tip)):
            if count >= limit:
                break
            out.append((str(commit.id), commit.message))
    except (pygit2.GitError, KeyError, ValueError):
        return []
    return out


def has_no_commit(store: Path) -> bool:
    """Whether ``store`` is a git repository whose branch has no commit yet (false for a path
    that is no repository)."""
    try:
        return bool(pygit2.Repository(str(store)).is_empty)
    except (pygit2.GitError, KeyError):
        return False


def exclude_in_store(store: Path, pattern: str) -> None:
    """``ensure_excluded`` for the repository at ``store``; nothing for a bare one or a path that
    is no repository (there is no checkout to keep clean)."""
    try:
        repo = pygit2.Repository(str(store))
    except (pygit2.GitError, KeyError):
        return
    if not repo.is_bare:
        ensure_excluded(repo, pattern)


def init_store_repository(
    target: Path,
    paths: Iterable[str],
    message: str,
    when: datetime,
    branch: str,
    config: Mapping[str, str],
) -> str:
    """A new repository at ``target`` whose first commit, on ``branch``, holds ``paths`` (files
    already written under ``target``), with ``config`` set; returns the commit's id."""
    repo = pygit2.init_repository(str(target), initial_head=branch)
    for key, value in config.items():
        repo.config[key] = value
    for rel in sorted(paths):
        repo.index.add(rel)
    repo.index.write()
    tree = repo.index.write_tree()
    who = signature(repo, when)
    return str(repo.create_commit("HEAD", who, who, message, tree, []))
