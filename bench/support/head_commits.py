"""Git side of the head benchmark: cached stores and the commits the bench advances over.

Stores are built once per size under ``headd-bench-stores/n<N>`` of the bench cache (``bench.support.data.cache_dir``) by ``bench.support.stores`` (built
into a temporary directory and renamed, so an interrupted build is never taken for a cached one).
Every commit the bench makes is written with no reference update (``create_commit(None, ...)``):
the cached store's ``main`` never moves, so every run starts from the same commit.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import pygit2

from bench.support.data import cache_dir
from bench.support.stores import build_store
from headd.memfile.archive import archive_path, archive_stamps

STORE_ROOT = cache_dir("headd-bench-stores")
SIG = pygit2.Signature("bench", "bench@headd.local", 1_764_489_600, 0)


def cached_store(n: int, root: Path = STORE_ROOT) -> tuple[pygit2.Repository, str, bool]:
    """The store of ``n`` memories (built when missing), its ``main`` commit, and whether it was
    built by this call."""
    dest = root / f"n{n}"
    built = False
    if not (dest / ".git").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        scratch = root / f"n{n}.build-{os.getpid()}"
        shutil.rmtree(scratch, ignore_errors=True)
        build_store(scratch, n)
        scratch.rename(dest)
        built = True
    repo = pygit2.Repository(str(dest))
    return repo, str(repo.references["refs/heads/main"].target), built


def _with_paths(
    repo: pygit2.Repository, tree: pygit2.Tree | None, changes: Mapping[str, bytes | None]
) -> pygit2.Oid:
    """``tree`` with each path set to its bytes (None: removed), rebuilding only the subtrees on
    the changed paths (a flat index over 100,000 entries would cost more than the advance)."""
    here: dict[str, bytes | None] = {}
    below: dict[str, dict[str, bytes | None]] = {}
    for path, data in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            below.setdefault(head, {})[rest] = data
        else:
            here[head] = data
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, data in here.items():
        if data is None:
            if tree is not None and name in tree:
                builder.remove(name)
        else:
            builder.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    for name, sub_changes in below.items():
        subtree = None
        if tree is not None and name in tree:
            entry = tree[name]
            subtree = repo[entry.id] if entry.type_str == "tree" else None
        oid = _with_paths(repo, subtree, sub_changes)  # type: ignore[arg-type]
        if len(repo[oid]) == 0:  # type: ignore[arg-type]
            if tree is not None and name in tree:
                builder.remove(name)
        else:
            builder.insert(name, oid, pygit2.GIT_FILEMODE_TREE)
    return builder.write()


def commit_changes(
    repo: pygit2.Repository, parent: str, changes: Mapping[str, bytes | None], message: str
) -> str:
    """A commit on ``parent`` that sets (or, for None, deletes) the given paths. No ref moves."""
    base = repo[parent].peel(pygit2.Commit)
    tree = _with_paths(repo, base.tree, changes)
    return str(repo.create_commit(None, SIG, SIG, message, tree, [base.id]))


def read_text(repo: pygit2.Repository, sha: str, path: str) -> str:
    commit = repo[sha].peel(pygit2.Commit)
    return repo[commit.tree[path].id].data.decode("utf-8")  # type: ignore[attr-defined]


def edited(html: str, stamp: int) -> str:
    """A one-paragraph edit of the article: a sentence appended before ``</article>``."""
    marker = "</article>"
    at = html.rindex(marker)
    return f"{html[:at]}<p>Edited in revision {stamp}.</p>\n{html[at:]}"


def edit_commit(repo: pygit2.Repository, parent: str, path: str, stamp: int) -> str:
    """``parent`` plus a one-file edit of ``path``."""
    html = edited(read_text(repo, parent, path), stamp)
    return commit_changes(repo, parent, {path: html.encode()}, f"bench: edit {path}")


def add_commit(repo: pygit2.Repository, parent: str, path: str, html: str) -> str:
    return commit_changes(repo, parent, {path: html.encode()}, f"bench: add {path}")


def near_duplicate_path(path: str) -> str:
    """Where the near-duplicate of ``path`` goes: a sibling folder, same file name."""
    folder, _, name = path.rpartition("/")
    return f"{folder}-dups/{name}" if folder else f"dups/{name}"


def near_duplicates_commit(repo: pygit2.Repository, parent: str, paths: list[str]) -> str:
    """``parent`` plus one near-duplicate of each path (the same memory, one sentence added)."""
    changes: dict[str, bytes | None] = {
        near_duplicate_path(path): edited(read_text(repo, parent, path), 0).encode()
        for path in paths
    }
    return commit_changes(repo, parent, changes, "bench: near-duplicates")


def archive_commit(
    repo: pygit2.Repository, parent: str, paths: list[str], now: datetime
) -> tuple[str, list[str]]:
    """``parent`` with each path archived as memhtml evicts: moved to ``archive/<YYYY>/<path>``
    with the three stamps. Returns the commit and the archive paths."""
    changes: dict[str, bytes | None] = {}
    moved = []
    for path in paths:
        target = archive_path(path, now.year)
        changes[target] = archive_stamps(read_text(repo, parent, path), now).encode()
        changes[path] = None
        moved.append(target)
    return commit_changes(repo, parent, changes, "bench: archive near-duplicates"), moved
