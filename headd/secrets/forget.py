"""``forget``: remove one memory from the whole history, for good.

Archiving keeps a memory; a leaked credential or a fact someone has the right to have erased
must not stay in any commit. ``forget`` rewrites every commit of every branch and tag that holds
the path (and its archive copies, ``archive/<YYYY>/<path>``) into one without it, keeping
authors, dates and messages; drops the rescue and conflict refs and the remote-tracking refs
that still hold it; expires the reflogs; prunes the objects; and removes the derived files that
hold its text (the SQLite index and the head snapshots, rebuilt by the next daemon start).

It refuses while another process holds the store lock (a running daemon, an import, a second
``forget``), and before it rewrites anything when the work tree has uncommitted edits. With a
remote it says what the remote and other clones still hold and what to run there; it pushes only
when asked (``push=True``), with a lease on the remote branch as last fetched, the one place
headd rewrites a published branch.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from headd.errors import DaemonRunning, GitFailure, PathNotFound, WriteConflict
from headd.remote.transport import REWRITTEN_PREFIX
from headd.store import git_io, locks

_ARCHIVED = re.compile(r"^archive/\d{4}/(.+)$")
#: Refs rewritten in place; any other ref holding the path is dropped.
REWRITTEN_PREFIXES = ("refs/heads/", "refs/tags/")
#: git's status flags for a file that is untracked (WT_NEW) or ignored: not an edit.
_UNTRACKED_OR_IGNORED = 0x80 | 0x4000
DERIVED = (
    Path(".memhtml") / "headd" / "index.db",
    Path(".memhtml") / "headd" / "index.db-wal",
    Path(".memhtml") / "headd" / "index.db-shm",
    Path(".memhtml") / "headd" / "snapshots",
)


@dataclass
class ForgetReport:
    path: str
    paths: list[str] = field(default_factory=list)
    rewritten_commits: int = 0
    rewritten_refs: list[str] = field(default_factory=list)
    dropped_refs: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _matches(path: str, target: str) -> bool:
    if path == target:
        return True
    archived = _ARCHIVED.match(path)
    return archived is not None and archived.group(1) == target


def _held_paths(repo: pygit2.Repository, tree: pygit2.Tree, target: str) -> list[str]:
    """The paths of ``tree`` that are ``target`` or one of its archive copies."""
    out = []
    parts = target.split("/")
    try:
        tree[target]
        out.append(target)
    except KeyError:
        pass
    try:
        archive = tree["archive"]
    except KeyError:
        return out
    archive_tree = repo[archive.id]
    if isinstance(archive_tree, pygit2.Tree):
        for year in archive_tree:
            candidate = f"archive/{year.name}/{'/'.join(parts)}"
            try:
                tree[candidate]
                out.append(candidate)
            except KeyError:
                continue
    return out


def _without(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> pygit2.Oid:
    """``tree`` with ``path`` removed (an emptied directory goes too)."""
    head, _, rest = path.partition("/")
    builder = repo.TreeBuilder(tree)
    if not rest:
        builder.remove(head)
        return builder.write()
    sub = repo[tree[head].id]
    assert isinstance(sub, pygit2.Tree)
    new_sub = _without(repo, sub, rest)
    if len(repo[new_sub]) == 0:  # type: ignore[arg-type]
        builder.remove(head)
    else:
        builder.insert(head, new_sub, pygit2.enums.FileMode.TREE)
    return builder.write()


def _git(store: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, timeout=600
    )
    if check and run.returncode != 0:
        raise GitFailure(f"git {args[0]} failed: {run.stderr.strip()[:300]}", {"command": args[0]})
    return run


def _refs(repo: pygit2.Repository) -> list[tuple[str, pygit2.Oid]]:
    out = []
    for name in repo.references:
        ref = repo.references.get(name)
        if ref is None or ref.type != pygit2.enums.ReferenceType.DIRECT:
            continue
        try:
            out.append((name, ref.peel(pygit2.Commit).id))
        except (pygit2.GitError, ValueError):
            continue
    return out


def _commits_of(repo: pygit2.Repository, tips: Iterable[pygit2.Oid]) -> list[pygit2.Commit]:
    walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    for tip in tips:
        walker.push(tip)
    return list(walker)


def forget(store: Path, target: str, *, push: bool = False) -> ForgetReport:
    """Remove ``target`` (a memory path) from every commit of the repository at ``store``."""
    target = target.strip().lstrip("/")
    repo = git_io.open_repo(store)
    lock = locks.StoreLock(repo.path)
    if not lock.acquired:
        raise DaemonRunning(
            "another process holds the store (a running headd, an import); stop it, then run "
            "forget again",
            {"lock": str(lock.path)},
        )
    try:
        return _forget(store, repo, target, push)
    finally:
        lock.release()


def _forget(store: Path, repo: pygit2.Repository, target: str, push: bool) -> ForgetReport:
    report = ForgetReport(path=target)
    refs = _refs(repo)
    commits = _commits_of(repo, {oid for _, oid in refs})
    holding = {c.id: _held_paths(repo, c.tree, target) for c in commits}
    if not any(holding.values()):
        raise PathNotFound(f"no commit of any ref holds {target}", {"path": target})
    report.paths = sorted({p for paths in holding.values() for p in paths})
    if not repo.is_bare:
        dirty = [
            p
            for p, flags in repo.status().items()
            if _matches(p, target) or flags & ~_UNTRACKED_OR_IGNORED
        ]
        dirty = [p for p in dirty if not p.startswith(".memhtml/")]
        if dirty:
            raise WriteConflict(
                "the work tree holds uncommitted edits; commit or discard them first",
                {"paths": sorted(dirty)[:20]},
            )
    mapping: dict[pygit2.Oid, pygit2.Oid] = {}
    for commit in commits:
        tree_id = commit.tree_id
        for path in holding[commit.id]:
            tree = repo[tree_id]
            assert isinstance(tree, pygit2.Tree)
            tree_id = _without(repo, tree, path)
        parents = [mapping.get(p, p) for p in commit.parent_ids]
        if tree_id == commit.tree_id and parents == list(commit.parent_ids):
            mapping[commit.id] = commit.id
            continue
        mapping[commit.id] = repo.create_commit(
            None,
            commit.author,
            commit.committer,
            commit.raw_message.decode("utf-8", "replace"),
            tree_id,
            parents,
        )
        report.rewritten_commits += 1
    remote_tracking: dict[str, pygit2.Oid] = {}
    for name, oid in refs:
        new = mapping.get(oid, oid)
        if new == oid:
            continue
        if name.startswith(REWRITTEN_PREFIXES):
            repo.references.create(name, new, force=True)
            report.rewritten_refs.append(name)
        else:
            if name.startswith("refs/remotes/"):
                remote_tracking[name] = oid
            repo.references.delete(name)
            report.dropped_refs.append(name)
    _update_checkout(store, repo)
    report.remotes = [str(name) for name in repo.remotes.names()]
    if push:
        _push(store, repo, report, remote_tracking)
    _advise(report)
    _git(store, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    _git(store, "gc", "--prune=now", "--quiet")
    for derived in DERIVED:
        full = store / derived
        if full.is_dir():
            shutil.rmtree(full, ignore_errors=True)
        elif full.exists():
            full.unlink()
    return report


def _update_checkout(store: Path, repo: pygit2.Repository) -> None:
    """Bring the index and the work tree to the rewritten branch (the file goes from disk)."""
    if repo.is_bare or repo.head_is_unborn:
        return
    _git(store, "reset", "--hard", "--quiet", "HEAD")


def _push(
    store: Path, repo: pygit2.Repository, report: ForgetReport, tracking: dict[str, pygit2.Oid]
) -> None:
    for name in report.rewritten_refs:
        if not name.startswith("refs/heads/"):
            continue
        branch = name.removeprefix("refs/heads/")
        for remote in report.remotes:
            tracked = tracking.get(f"refs/remotes/{remote}/{branch}")
            if tracked is None:
                continue
            new = repo.references[name].target
            _git(
                store,
                "push",
                "--quiet",
                f"--force-with-lease={name}:{tracked}",
                "--atomic",
                remote,
                f"{new}:{name}",
                # The mark a following daemon elsewhere reads so that it follows the rewrite
                # instead of replaying the dropped commits (``RemoteSync._forgotten``).
                f"{new}:{REWRITTEN_PREFIX}{tracked}",
            )
            repo.references.create(f"refs/remotes/{remote}/{branch}", new, force=True)
            report.pushed.append(f"{remote}/{branch}")


def _advise(report: ForgetReport) -> None:
    unpushed = [
        r.removeprefix("refs/remotes/")
        for r in report.dropped_refs
        if r.startswith("refs/remotes/") and r.removeprefix("refs/remotes/") not in report.pushed
    ]
    if unpushed:
        report.advice.append(
            f"the remote branches {', '.join(unpushed)} still hold {report.path}; run "
            f"`headctl forget {report.path} --push` to rewrite them (with a lease), then in "
            "every other clone: `git fetch` and `git reset --hard @{u}`, and "
            "`git reflog expire --expire=now --all && git gc --prune=now`"
        )
    if report.pushed:
        report.advice.append(
            "the remote's branch is rewritten, but the host may keep the old commits reachable "
            "(pull requests, caches, forks) until it collects them; a headd daemon following "
            "the remote in another clone moves to the rewritten branch by itself, but every "
            "other clone still holds the old objects: in each, `git fetch`, "
            "`git reset --hard @{u}` (where no daemon follows), then "
            "`git reflog expire --expire=now --all && git gc --prune=now`"
        )
