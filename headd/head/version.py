"""Versions: the corpus at one commit, loaded from git or advanced from a parent.

``load_head`` reads one commit's tree and blobs through pygit2 (no subprocess), in tree order, and
folds the parsed records into indexes. ``advance_head`` builds the version at a later commit from
its parent plus the paths the two trees differ on (a rename counts as both of its paths): each
changed candidate is removed and, when still present, re-parsed, unless its blob is the parent
record's, which keeps the parent's record object. Everything untouched is the parent's own object.
A file that fails to parse is a :class:`SkippedFile`, recorded, never thrown.

The git reads are a thin layer (``_tree_of``, ``_candidate_blobs``, ``changed_blobs``) over the
pure fold in ``indexes.py``; pygit2 failures become :class:`headd.errors.GitFailure`.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import Iterable, Iterator

import pygit2

from headd.errors import GitFailure
from headd.git_cache import cache_large_trees
from headd.head.blob_parse import SkippedFile as SkippedFile
from headd.head.blob_parse import parse_record as parse_record
from headd.head.blob_parse import read_and_parse
from headd.head.indexes import EMPTY_INDEXES, IndexedView, Indexes, IndexesBuilder
from headd.record import MemoryRecord

log = logging.getLogger(__name__)

MEMORY_EXTENSION = ".html"
STATE_DIR = ".memhtml/"


#: Files at the store's root that describe the store, not memories: ``headctl init`` writes the
#: README, so a fresh store reports no skipped file.
ROOT_DOCUMENTS = frozenset({"README.html"})


def is_candidate_path(path: str) -> bool:
    """Whether a tree path is a memory file: ``.html``, not under ``.memhtml/``, not
    ``index.html``, not the root's ``README.html``."""
    if not path.endswith(MEMORY_EXTENSION) or path.startswith(STATE_DIR):
        return False
    return path.rsplit("/", 1)[-1] != "index.html" and path not in ROOT_DOCUMENTS


class HeadVersion(IndexedView):
    """One immutable version of the corpus, built from one commit.

    ``parent`` points at the version it was advanced from (None when loaded from scratch), so a
    caller can walk back; it is a pointer, so a chain of versions costs its deltas only.
    """

    __slots__ = ("parent", "skipped")

    parent: HeadVersion | None
    skipped: tuple[SkippedFile, ...]

    def __init__(
        self,
        indexes: Indexes,
        sha: str,
        parent: HeadVersion | None,
        skipped: tuple[SkippedFile, ...],
    ) -> None:
        super().__init__(indexes, sha)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "skipped", skipped)

    @property
    def sha(self) -> str:
        assert self._sha is not None
        return self._sha


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector while a whole version's objects are made.

    A load or a snapshot decode allocates ~10^5-10^6 container objects in a burst and none of
    them is garbage (the parser leaves no cycles behind); with the collector running, the
    young and middle passes walk them again and again. Measured at 10,000 records: the index
    build's freeze cost 1.5 s of CPU with the collector, 0.7 s without; a snapshot decode
    2.4-5.8 s against 1.4 s. What is left is one young pass over them when the collector is back
    on, unless the caller freezes them first (the daemon's cold start does, ``coldstart.py``).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _commit_of(repo: pygit2.Repository, sha: str) -> pygit2.Commit:
    try:
        commit = repo.revparse_single(sha).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise GitFailure(f"cannot resolve commit {sha}", {"sha": sha}) from exc
    return commit


def _candidate_blobs(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid]]:
    """``(path, blob id)`` of every candidate file under ``tree``, in git's tree order."""
    for entry in tree:
        name = entry.name
        if name is None:  # pragma: no cover - tree entries always have names
            continue
        if entry.type_str == "tree":
            if not prefix and name + "/" == STATE_DIR:
                continue
            yield from _candidate_blobs(entry, f"{prefix}{name}/")  # type: ignore[arg-type]
        elif entry.type_str == "blob":
            path = prefix + name
            if is_candidate_path(path):
                yield path, entry.id


def load_head(repo: pygit2.Repository, sha: str, *, workers: int | None = None) -> HeadVersion:
    """The version at ``sha`` from a full tree read, folding the records in tree order.

    ``workers`` > 1 parses on that many processes (``None``: decided by the candidate count, see
    ``parallel_parse``); the fold is the same either way.
    """
    cache_large_trees()
    commit = _commit_of(repo, sha)
    with collector_paused():
        return _load(repo, commit, sha, workers)


def _load(
    repo: pygit2.Repository, commit: pygit2.Commit, sha: str, workers: int | None
) -> HeadVersion:
    from headd.head import parallel_parse

    builder = IndexesBuilder(EMPTY_INDEXES)
    skipped: list[SkippedFile] = []
    try:
        entries = list(_candidate_blobs(commit.tree))
        count = parallel_parse.default_workers(len(entries)) if workers is None else workers
        done = 0
        if count > 1 and entries:
            for run in parallel_parse.parse_runs(repo.path, entries, count):
                records = [item for item in run.items if isinstance(item, MemoryRecord)]
                skipped.extend(
                    SkippedFile(*item) for item in run.items if not isinstance(item, MemoryRecord)
                )
                builder.insert_coded(records, run.tokens)
                done = run.stop
        for path, oid in entries[done:]:
            parsed = read_and_parse(repo, path, oid)
            if isinstance(parsed, SkippedFile):
                skipped.append(parsed)
            else:
                builder.insert(parsed)
    except pygit2.GitError as exc:
        raise GitFailure(f"cannot read the tree of {sha}", {"sha": sha}) from exc
    version = HeadVersion(builder.freeze(), str(commit.id), None, tuple(skipped))
    log.debug("loaded %s: %d records, %d skipped", version.sha, version.size, len(skipped))
    return version


#: Above this many entries on one level, libgit2's own diff compares the two trees faster than a
#: Python loop over their entries does.
_NATIVE_DIFF_ENTRIES = 256


def _blobs_under(
    repo: pygit2.Repository, tree_id: pygit2.Oid, prefix: str
) -> Iterator[tuple[str, pygit2.Oid]]:
    tree = repo[tree_id]
    for entry in tree:  # type: ignore[attr-defined]
        if entry.type_str == "tree":
            yield from _blobs_under(repo, entry.id, f"{prefix}{entry.name}/")
        elif entry.type_str == "blob":
            yield prefix + entry.name, entry.id


def _tree_changes(
    repo: pygit2.Repository,
    old: pygit2.Tree,
    new: pygit2.Tree,
    prefix: str,
    out: dict[str, pygit2.Oid | None],
) -> None:
    """Every blob path that differs under two trees, with its blob at ``new`` (None: gone).

    Subtrees with equal ids are skipped whole, so a one-file commit reads only the trees on the
    path to that file (a full ``diff_to_tree`` walks every tree of both commits: ~6 ms at 10,000
    files, ~100 ms at 100,000). A wide level is handed to libgit2, which compares it natively.
    """
    if old.id == new.id:
        return
    if len(old) + len(new) > _NATIVE_DIFF_ENTRIES:
        for delta in old.diff_to_tree(new).deltas:
            if delta.old_file.path:
                out.setdefault(prefix + delta.old_file.path, None)
            if delta.status != pygit2.GIT_DELTA_DELETED and delta.new_file.path:
                out[prefix + delta.new_file.path] = delta.new_file.id
        return
    before = {e.name: e for e in old}
    after = {e.name: e for e in new}
    for name in before.keys() | after.keys():
        a, b = before.get(name), after.get(name)
        if a is not None and b is not None and a.id == b.id and a.filemode == b.filemode:
            continue
        path = f"{prefix}{name}"
        a_tree = a is not None and a.type_str == "tree"
        b_tree = b is not None and b.type_str == "tree"
        if a_tree and b_tree:
            _tree_changes(repo, repo[a.id], repo[b.id], path + "/", out)  # type: ignore[arg-type,union-attr]
            continue
        if a_tree:
            for gone, _ in _blobs_under(repo, a.id, path + "/"):  # type: ignore[union-attr]
                out.setdefault(gone, None)
        elif a is not None and a.type_str == "blob":
            out.setdefault(path, None)
        if b_tree:
            for added, oid in _blobs_under(repo, b.id, path + "/"):  # type: ignore[union-attr]
                out[added] = oid
        elif b is not None and b.type_str == "blob":
            out[path] = b.id


def changed_blobs(
    repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree
) -> dict[str, pygit2.Oid | None]:
    """Every path whose blob differs between two trees (a rename contributes both paths), with
    its blob at ``new``, or None where the path is gone."""
    out: dict[str, pygit2.Oid | None] = {}
    _tree_changes(repo, old, new, "", out)
    return out


def advance_head(repo: pygit2.Repository, parent: HeadVersion, sha: str) -> HeadVersion:
    """The version at ``sha``, built from ``parent`` plus the paths the two trees differ on."""
    cache_large_trees()
    commit = _commit_of(repo, sha)
    target = str(commit.id)
    if target == parent.sha:
        return parent
    base_tree = _commit_of(repo, parent.sha).tree
    try:
        blobs = changed_blobs(repo, base_tree, commit.tree)
        changed = [path for path in blobs if is_candidate_path(path)]
        if not changed:
            return HeadVersion(parent.indexes, target, parent, parent.skipped)
        changed_set = set(changed)
        skipped = [skip for skip in parent.skipped if skip.path not in changed_set]
        builder = IndexesBuilder(parent.indexes)
        records = parent.indexes.records
        for path in changed:
            oid = blobs[path]
            if oid is None:
                builder.remove(path)
                continue
            previous = records.get(path)
            if previous is not None and previous.blob_sha == str(oid):
                builder.insert(previous)
                continue
            parsed = read_and_parse(repo, path, oid)
            if isinstance(parsed, SkippedFile):
                builder.remove(path)
                skipped.append(parsed)
            else:
                builder.insert(parsed)
    except pygit2.GitError as exc:
        raise GitFailure(f"cannot diff {parent.sha}..{target}", {"sha": target}) from exc
    return HeadVersion(builder.freeze(), target, parent, tuple(skipped))


def version_from_records(records: Iterable[MemoryRecord], sha: str) -> HeadVersion:
    """A version from records already parsed (a snapshot), with no parent and nothing skipped."""
    builder = IndexesBuilder(EMPTY_INDEXES)
    for record in records:
        builder.insert(record)
    return HeadVersion(builder.freeze(), sha, None, ())
