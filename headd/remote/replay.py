"""A local commit's changes, path by path, judged again on another tip.

This is how two machines' writes meet without a merge commit and without conflict markers. For
each path the local commit ``S`` changed against its parent ``P``, with ``T`` the tip we replay
onto:

- ``T`` already holds ``S``'s version: nothing to do (this is what makes a replay idempotent).
- ``T`` still holds ``P``'s version (the other side left the path alone): ``S``'s change applies.
  A new memory file is judged at the tip as a ``write`` is: a memory whose content hash is already
  active there dedups (the other machine wrote the same fact), and one sharing a frame key with an
  active memory gets its ``contradicts`` link, a head splice that keeps its content hash.
- Both sides changed it: the remote's version stays in the tree, ours stays reachable (the caller
  records a conflict), except for the committed state sidecar, whose rows merge by max, as
  ``headctl state import`` merges them.

The result is one commit on ``T`` with ``S``'s author and message plus a ``Headd-Replayed-From``
trailer, or no commit when nothing was left to change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import pygit2

from headd.memfile.sidecar import STATE_SIDECAR_PATH, merge_entries, parse_sidecar, render_sidecar
from headd.ops import Put
from headd.paths import para_of
from headd.record import Link
from headd.store import git_io
from headd.store.ports import Overlay, VersionSource, add_link
from headd.store.sessions import LoggedOp
from headd.store.validate import judge

REPLAYED_TRAILER = "Headd-Replayed-From"


@dataclass
class Replayed:
    """What replaying one commit did."""

    source: str
    #: The new tip: a commit on the tip replayed onto, or that tip itself when nothing changed.
    tip: str
    #: Paths both sides changed, where the remote's version stayed.
    conflicts: list[str] = field(default_factory=list)
    #: New memories that were already on the tip under another path: (ours, existing).
    deduped: list[tuple[str, str]] = field(default_factory=list)
    #: New memories linked ``contradicts`` to a frame-key rival: (ours, rival).
    contradictions: list[tuple[str, str]] = field(default_factory=list)


def _is_memory(path: str) -> bool:
    return path.endswith(".html") and para_of(path) is not None


def _text(repo: pygit2.Repository, blob: str) -> str:
    return bytes(repo[blob].read_raw()).decode("utf-8")


def merge_sidecar_entries(ours: str, theirs: str) -> str:
    """Both sides' sidecar rows merged as ``headctl state export`` merges them (the larger count,
    the later stamp, the score of the row updated last; a row only one side has is kept)."""
    return render_sidecar(merge_entries(parse_sidecar(theirs).entries, parse_sidecar(ours).entries))


def _changed(source: pygit2.Commit) -> set[str]:
    """Every path ``source`` changed against its first parent (against nothing for a root)."""
    if source.parents:
        diff = source.parents[0].tree.diff_to_tree(source.tree)
    else:
        diff = source.tree.diff_to_tree(swap=True)
    out: set[str] = set()
    for delta in diff.deltas:
        out.add(delta.old_file.path)
        out.add(delta.new_file.path)
    return out


_TRAILER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: ")


def _message(source: pygit2.Commit) -> str:
    """The source's message with a ``Headd-Replayed-From`` trailer, joined to its trailer block
    when it ends in one (a session commit's does), else in a paragraph of its own."""
    text = source.message.rstrip("\n")
    last = text.rsplit("\n\n", 1)[-1]
    in_block = "\n\n" in text and all(_TRAILER_LINE.match(line) for line in last.splitlines())
    sep = "\n" if in_block else "\n\n"
    return f"{text}{sep}{REPLAYED_TRAILER}: {source.id}\n"


def replay_commit(
    repo: pygit2.Repository,
    source_sha: str,
    onto: str,
    *,
    versions: VersionSource,
    overlay: Overlay,
    now: datetime,
) -> Replayed:
    """Replay commit ``source_sha``'s changes (against its first parent) onto ``onto``."""
    source = repo[source_sha].peel(pygit2.Commit)
    parent = str(source.parents[0].id) if source.parents else None
    paths = _changed(source)
    out = Replayed(source=source_sha, tip=onto)
    blobs: dict[str, str | None] = {}
    adds: list[str] = []
    for path in sorted(paths):
        base = git_io.blob_at(repo, parent, path) if parent is not None else None
        ours = git_io.blob_at(repo, source_sha, path)
        theirs = git_io.blob_at(repo, onto, path)
        if theirs == ours:
            continue
        if theirs == base:
            if base is None and ours is not None and _is_memory(path):
                adds.append(path)
            else:
                blobs[path] = ours
        elif path == STATE_SIDECAR_PATH and ours is not None and theirs is not None:
            merged = merge_sidecar_entries(_text(repo, ours), _text(repo, theirs))
            blobs[path] = str(repo.create_blob(merged.encode("utf-8")))
        else:
            out.conflicts.append(path)
    writes: dict[str, str] = {}
    if adds:
        writes = _judged_adds(repo, onto, blobs, adds, versions, overlay, out)
    if not blobs and not writes:
        return out
    for path, html in writes.items():
        blobs[path] = str(repo.create_blob(html.encode("utf-8")))
    committer = git_io.signature(repo, now)
    out.tip = git_io.write_commit_of_blobs(
        repo, onto, blobs, _message(source), source.author, committer
    )
    return out


def _judged_adds(
    repo: pygit2.Repository,
    onto: str,
    blobs: Mapping[str, str | None],
    adds: list[str],
    versions: VersionSource,
    overlay: Overlay,
    out: Replayed,
) -> dict[str, str]:
    """Judge the new memories on the tip with the other changes applied; return what to write."""
    texts = {path: _text(repo, git_io.blob_at(repo, out.source, path) or "") for path in adds}
    # The other changes first (an archive's removal, say), so the adds are judged on what lands.
    staged = onto
    if blobs:
        committer = git_io.signature(repo, datetime.now().astimezone())
        staged = git_io.write_commit_of_blobs(
            repo, onto, blobs, "headd: replay staging", committer, committer
        )
    version = versions.version(staged)
    ops = [LoggedOp(Put(path=path, html=texts[path]), from_write=True) for path in adds]
    verdict = judge(version, ops, overlay)
    for deduped in verdict.deduped:
        out.deduped.append((adds[deduped.op], deduped.existing))
    writes: dict[str, str] = {}
    for index in verdict.accepted:
        path = adds[index]
        html = texts[path]
        record = verdict.view.record(path)
        if record is not None and record.frame_key is not None:
            for rival in version.by_frame_key(record.frame_key):
                rival_record = version.record(rival)
                if rival == path or rival_record is None or rival_record.archived:
                    continue
                if Link(rel="contradicts", href="/" + rival) not in record.links:
                    html = add_link(html, "contradicts", "/" + rival)
                out.contradictions.append((path, rival))
        writes[path] = html
    for violation in verdict.violations:
        # A file the tip's rules refuse (a claim edit over a path the other side now holds, a
        # format rule) cannot land; it stays reachable as a conflict rather than being dropped.
        if violation.path is not None:
            out.conflicts.append(violation.path)
    return writes
