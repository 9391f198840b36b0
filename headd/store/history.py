"""The store's git history as the console shows it: read-only, straight from the object database.

The daemon answers for one commit at a time (``at``); what changed between commits (a memory's
history, the branch's recent activity, a sleep run's branch) is git's own record, so the console
reads it with pygit2 rather than asking the daemon to walk history for it. It lives with the
store, beside ``git_io``, so the client's processes read git through the core and never import
pygit2 themselves. Nothing here writes: every change goes through a daemon session (the
console's ``actions.py``). Every walk is bounded, so a page over a long history costs a fixed
amount.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pygit2

#: The repository and commit types, named here so callers need not import pygit2.
Repository = pygit2.Repository
GitCommit = pygit2.Commit

#: How many commits a memory's history walks at most, how many it lists, and how many of those
#: (the newest) it shows with their diffs; an older one's diff is one click away (its ``at``).
HISTORY_SCAN = 5000
HISTORY_SHOWN = 50
HISTORY_DIFFS = 10
#: How many commits the activity page reads.
ACTIVITY_SHOWN = 100
#: The ref prefixes a sleep run's review branch may live under.
SLEEP_PREFIXES = ("refs/heads/sleep/", "refs/sleep/")

#: A commit's kind: memhtml's ``memhtml(<kind>): `` prefix, or a sleep phase's ``sleep(<phase>): ``.
_KIND = re.compile(r"(?:memhtml\((?P<kind>[a-z-]+)\)|(?P<sleep>sleep)\([a-z-]+\)):\s*")
_MEMHTML_KIND = re.compile(r"memhtml\([a-z-]+\):\s*")
_TRAILER = re.compile(r"^(Memhtml-Session|Headd-Session):\s*(?P<value>.+)$", re.MULTILINE)
_SHA = re.compile(r"[0-9a-fA-F]{4,40}")


class BadRevision(ValueError):
    """A revision the store does not hold (or one that names no commit)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    message: str
    author: str
    when: str
    day: str
    session: str | None
    kind: str
    parents: int


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str
    old_path: str | None
    diff: str


@dataclass(frozen=True)
class Version:
    """One commit that changed a memory's file, with the file's diff from the version before
    (None past the first HISTORY_DIFFS)."""

    commit: Commit
    diff: str | None
    exists: bool


@dataclass
class SessionGroup:
    session: str
    commits: list[Commit] = field(default_factory=list)


@dataclass
class Day:
    day: str
    counts: dict[str, int] = field(default_factory=dict)
    sessions: list[SessionGroup] = field(default_factory=list)


@dataclass(frozen=True)
class SleepRun:
    name: str
    ref: str
    tip: str
    base: str | None
    commits: list[Commit]
    changes: list[FileChange]
    counts: dict[str, int]

    @property
    def run_id(self) -> str:
        """The id the daemon's sleep methods take: ``sleep/<date>``."""
        return f"sleep/{self.name}"


def open_repo(store: Path) -> pygit2.Repository:
    return pygit2.Repository(str(store))


def blob_at(repo: pygit2.Repository, sha: str) -> str:
    """The text of the blob ``sha`` (a record's ``blob_sha``), or "" when it is no blob."""
    blob = repo.get(sha)
    return bytes(blob.data).decode("utf-8", "replace") if isinstance(blob, pygit2.Blob) else ""


def commit_of(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """The commit ``rev`` names (a sha, a short sha or a ref); BadRevision otherwise."""
    try:
        obj = repo.revparse_single(rev)
        peeled = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise BadRevision(f"no commit {rev!r} in this store") from exc
    assert isinstance(peeled, pygit2.Commit)
    return peeled


def is_revision(text: str) -> bool:
    """Whether ``text`` looks like a sha the console may pass on (hex, 4 to 40 digits)."""
    return bool(_SHA.fullmatch(text))


def describe(commit: pygit2.Commit) -> Commit:
    message = commit.message
    subject = message.splitlines()[0] if message else ""
    kinds = [m.group("kind") or m.group("sleep") for m in _KIND.finditer(subject)]
    kind = kinds[-1] if kinds else ("merge" if len(commit.parent_ids) > 1 else "commit")
    if kind == "session" and len(kinds) == 1:
        kind = "write"
    trailers = {m.group(1): m.group("value").strip() for m in _TRAILER.finditer(message)}
    session = trailers.get("Memhtml-Session") or trailers.get("Headd-Session")
    when = datetime.fromtimestamp(commit.commit_time, UTC)
    return Commit(
        sha=str(commit.id),
        subject=_MEMHTML_KIND.sub("", subject).strip() or subject,  # a phase's name stays
        message=message,
        author=commit.author.name,
        when=when.strftime("%Y-%m-%d %H:%M:%SZ"),
        day=when.strftime("%Y-%m-%d"),
        session=session,
        kind=kind,
        parents=len(commit.parent_ids),
    )


def blob_text(repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> str | None:
    """The file's text at ``commit``, or None when it has no file there."""
    try:
        entry = commit.tree[path]
    except KeyError:
        return None
    blob = repo.get(entry.id)
    if not isinstance(blob, pygit2.Blob):
        return None
    return bytes(blob.data).decode("utf-8", errors="replace")


def unified(before: str | None, after: str | None, path: str) -> str:
    """A readable unified diff of two versions of a file (either may be absent)."""
    lines = difflib.unified_diff(
        (before or "").splitlines(),
        (after or "").splitlines(),
        fromfile=f"a/{path}" if before is not None else "/dev/null",
        tofile=f"b/{path}" if after is not None else "/dev/null",
        lineterm="",
    )
    return "\n".join(lines)


def _entry_id(commit: pygit2.Commit, path: str) -> pygit2.Oid | None:
    try:
        return commit.tree[path].id
    except KeyError:
        return None


def file_history(repo: pygit2.Repository, tip: pygit2.Commit, path: str) -> list[Version]:
    """Every commit reachable from ``tip`` (first parents, newest first) that changed ``path``,
    the newest HISTORY_DIFFS with the file's diff from the version before; bounded by
    HISTORY_SCAN commits walked and HISTORY_SHOWN listed. Each blob is read once."""
    versions: list[Version] = []
    texts: dict[pygit2.Oid, str | None] = {}

    def text(entry: pygit2.Oid | None) -> str | None:
        if entry is None:
            return None
        if entry not in texts:
            blob = repo.get(entry)
            data = bytes(blob.data) if isinstance(blob, pygit2.Blob) else None
            texts[entry] = None if data is None else data.decode("utf-8", errors="replace")
        return texts[entry]

    commit: pygit2.Commit | None = tip
    mine = _entry_id(tip, path)
    scanned = 0
    while commit is not None and scanned < HISTORY_SCAN and len(versions) < HISTORY_SHOWN:
        parent = commit.parents[0] if commit.parent_ids else None
        theirs = _entry_id(parent, path) if parent is not None else None
        if mine != theirs:
            diff = None
            if len(versions) < HISTORY_DIFFS:
                diff = unified(text(theirs), text(mine), path)
            versions.append(Version(describe(commit), diff, mine is not None))
        commit, mine = parent, theirs  # the parent's entry is the next commit's own
        scanned += 1
    return versions


def first_parent_walk(tip: pygit2.Commit, limit: int) -> Iterator[pygit2.Commit]:
    commit: pygit2.Commit | None = tip
    for _ in range(limit):
        if commit is None:
            return
        yield commit
        commit = commit.parents[0] if commit.parent_ids else None


def activity(tip: pygit2.Commit, limit: int = ACTIVITY_SHOWN) -> list[Day]:
    """The branch's recent commits by day (newest first), each day's counts by kind, and its
    commits grouped by the session that made them."""
    days: dict[str, Day] = {}
    for raw in first_parent_walk(tip, limit):
        commit = describe(raw)
        day = days.setdefault(commit.day, Day(commit.day))
        day.counts[commit.kind] = day.counts.get(commit.kind, 0) + 1
        name = commit.session or "no session"
        group = next((g for g in day.sessions if g.session == name), None)
        if group is None:
            group = SessionGroup(name)
            day.sessions.append(group)
        group.commits.append(commit)
    return list(days.values())


def changes_between(
    repo: pygit2.Repository, base: pygit2.Commit | None, tip: pygit2.Commit
) -> list[FileChange]:
    """The files that differ from ``base`` to ``tip``, each with its readable diff."""
    diff = (
        base.tree.diff_to_tree(tip.tree) if base is not None else tip.tree.diff_to_tree(swap=True)
    )
    diff.find_similar()
    changes = []
    for delta in diff.deltas:
        old, new = delta.old_file.path, delta.new_file.path
        before = blob_text(repo, base, old) if base is not None else None
        after = blob_text(repo, tip, new)
        status = delta.status_char()
        changes.append(
            FileChange(
                path=new,
                status={"A": "added", "D": "deleted", "R": "moved"}.get(status, "changed"),
                old_path=old if old != new else None,
                diff=unified(before, after, new),
            )
        )
    return changes


def sleep_runs(repo: pygit2.Repository, branch_tip: pygit2.Commit) -> list[SleepRun]:
    """The sleep runs waiting for review: every ref under SLEEP_PREFIXES with commits over the
    branch, those commits and what they change (a run the branch holds already is left out)."""
    runs = []
    for ref in sorted(repo.references):
        prefix = next((p for p in SLEEP_PREFIXES if ref.startswith(p)), None)
        if prefix is None:
            continue
        tip = commit_of(repo, ref)
        base_id = repo.merge_base(tip.id, branch_tip.id)
        if base_id == tip.id:
            continue  # merged (or never ahead): nothing waits for review
        base = repo.get(base_id) if base_id is not None else None
        assert base is None or isinstance(base, pygit2.Commit)
        commits = []
        for raw in first_parent_walk(tip, HISTORY_SHOWN):
            if base is not None and raw.id == base.id:
                break
            commits.append(describe(raw))
        changes = changes_between(repo, base, tip)
        counts: dict[str, int] = {}
        for change in changes:
            counts[change.status] = counts.get(change.status, 0) + 1
        runs.append(
            SleepRun(
                name=ref[len(prefix) :],
                ref=ref,
                tip=str(tip.id),
                base=str(base.id) if base is not None else None,
                commits=commits,
                changes=changes,
                counts=counts,
            )
        )
    return runs
