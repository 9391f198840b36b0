"""The commit path: judge a session's ops, then land them with a compare-and-swap, or say why not.

Order (docs/design/store.md, "The commit path"):

1. Judge every op against the session's base, the version the commit is judged on
   (``validate.judge``). Any violation answers ``refused`` and writes nothing.
2. If the branch moved since the base, answer ``rebase-needed`` with the paths the session
   touches that the branch changed meanwhile. No path-disjoint fast path: a duplicate content
   hash or a frame-key rival collides across different paths, so only a judgement at the tip can
   decide, and the caller rebases (memhtml reached the same rule, ``docs/v2-poc.md`` step 2).
3. A put whose claim shares a frame key with another active memory gets a ``contradicts`` link
   to it (a head splice: the content hash survives). Both stay live.
4. Refuse an op that would write through or over a symbolic link (``symlink_violations``).
   Write blobs, tree and commit (unreachable until the ref moves, so harmless if we die).
5. When the branch is checked out, refuse if a touched path holds uncommitted edits.
6. Log the intent (durable), bring the checkout's files along (git's index entries are owed
   to ``index_behind`` and written after the answer), then compare-and-swap the branch on the
   base. A lost race rolls the checkout back and answers ``rebase-needed``.
7. Log the settlement: the session now sits on its commit with an empty log.

``crash_point`` marks every step so tests can kill the process there.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import msgspec
import pygit2

from headd.errors import HeaddError
from headd.memfile import head_edit
from headd.ops import Put
from headd.record import Link
from headd.store import git_io, recovery
from headd.store.crashpoints import crash_point
from headd.store.index_behind import IndexBehind
from headd.store.ports import (
    Overlay,
    VersionSource,
    View,
    add_link,
    is_memory_path,
    record_text,
)
from headd.store.results import (
    COMMITTED,
    REBASE_NEEDED,
    REFUSED,
    CommitResult,
    Contradiction,
    Violation,
)
from headd.store.sessions import Dropped, Event, Intent, LoggedOp, SessionState, Settled
from headd.store.validate import BATCH_CAP, Judgement, judge, touched_paths

log = logging.getLogger(__name__)

SUBJECT_PREFIX = "memhtml(session): "
SUBJECT_MAX = 72
SESSION_TRAILER = "Memhtml-Session"
PROMPT_TRAILER = "Memhtml-Prompt"
TURN_TRAILER = "Memhtml-Turn"
HEADD_SESSION_TRAILER = "Headd-Session"


class Provenance(msgspec.Struct, frozen=True):
    """The transcript a session commit's writes came from: the agent's session id,
    and optionally the prompt and the turn. Stamped into every written file's head as
    ``memhtml-session``/``memhtml-prompt``/``memhtml-turn`` and into the commit's trailers."""

    session_id: str
    prompt_id: str | None = None
    turn: str | None = None


PROVENANCE_METAS = ("memhtml-session", "memhtml-prompt", "memhtml-turn")


def stamp_provenance(html: str, provenance: Provenance) -> str:
    """Set the three provenance metas (a head splice: the content hash is unchanged); a meta
    the provenance lacks is removed, so a file never pairs this session with an older prompt."""
    values = (provenance.session_id, provenance.prompt_id, provenance.turn)
    for name, value in zip(PROVENANCE_METAS, values, strict=True):
        if value is None:
            html = head_edit.remove_meta(html, name)
        else:
            html = head_edit.set_meta(html, name, value)
    return html


def _one_line(text: str) -> str:
    return " ".join(text.split())


def commit_message(
    message: str | None, session_id: str, paths: int, provenance: Provenance | None = None
) -> str:
    """``memhtml(session): <subject>``, the rest of the message, then the session trailer.

    The subject is the message's first line flattened and capped at 72 characters (a longer
    line is kept whole as the body's first paragraph, so an archive reason is never lost); the id is
    flattened so it cannot forge a second trailer. With provenance, the trailers are memhtml's:
    ``Memhtml-Session`` names the transcript session (``Memhtml-Prompt``, ``Memhtml-Turn`` when
    known), and headd's own session id moves to ``Headd-Session`` when it differs.
    """
    lines = (message or "").strip().splitlines()
    first = _one_line(lines[0]) if lines else ""
    if first == "":
        first = f"{paths} path{'s' if paths != 1 else ''}"
    body = "\n".join(lines[1:]).strip()
    if len(first) > SUBJECT_MAX:  # the whole line opens the body: a cut subject loses nothing
        body = f"{first}\n\n{body}".strip()
        first = first[: SUBJECT_MAX - 1].rstrip() + "…"
    parts = [SUBJECT_PREFIX + first]
    if body:
        parts.append(body)
    if provenance is None:
        parts.append(f"{SESSION_TRAILER}: {_one_line(session_id)}")
        return "\n\n".join(parts) + "\n"
    trailers = [f"{SESSION_TRAILER}: {_one_line(provenance.session_id)}"]
    if provenance.prompt_id is not None:
        trailers.append(f"{PROMPT_TRAILER}: {_one_line(provenance.prompt_id)}")
    if provenance.turn is not None:
        trailers.append(f"{TURN_TRAILER}: {_one_line(provenance.turn)}")
    if _one_line(session_id) != _one_line(provenance.session_id):
        trailers.append(f"{HEADD_SESSION_TRAILER}: {_one_line(session_id)}")
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ordered_touched(state: SessionState, accepted: tuple[int, ...]) -> list[str]:
    seen: dict[str, None] = {}
    for index in accepted:
        for path in touched_paths(state.ops[index].op):
            seen.setdefault(path, None)
    return list(seen)


def symlink_violations(
    repo: pygit2.Repository,
    base: str,
    ref: str,
    ops: Iterable[tuple[int, LoggedOp]],
) -> list[Violation]:
    """One ``symlink`` violation per op that would write through, or over, a symbolic link: in
    the base's tree, or in the work tree when the checkout follows ``ref``.

    A write never follows a link (git itself refuses to write "beyond a symbolic link") and
    never replaces a committed link entry with a tree or a file behind the user's back; the op
    is refused and names the path and the link.
    """
    worktree = git_io.head_branch(repo) == ref
    out = []
    for index, logged in ops:
        for path in touched_paths(logged.op):
            link = git_io.symlink_on(repo, base, path, worktree=worktree)
            if link is not None:
                reason = f"{link} is a symbolic link; headd never writes through one"
                out.append(
                    Violation(kind="symlink", path=path, op=index, reasons=(reason,), paths=(link,))
                )
                break
    return out


def _mark_contradictions(
    version: View,
    final: View,
    state: SessionState,
    accepted: tuple[int, ...],
    writes: dict[str, str],
) -> list[Contradiction]:
    """Step 3: link each put to every other active memory sharing its frame key."""
    found: list[Contradiction] = []
    for index in accepted:
        op = state.ops[index].op
        if not isinstance(op, Put) or op.path not in writes:
            continue
        record = final.record(op.path)
        if record is None or record.frame_key is None:
            continue
        for rival in version.by_frame_key(record.frame_key):
            if rival == op.path:
                continue
            rival_record = final.record(rival)
            if rival_record is None or rival_record.archived:
                continue
            href = "/" + rival
            if Link(rel="contradicts", href=href) not in record.links:
                writes[op.path] = add_link(writes[op.path], "contradicts", href)
            found.append(Contradiction(path=op.path, against=rival))
    return found


def as_judged(final: View, writes: Mapping[str, str], removes: Iterable[str]) -> bool:
    """Whether the judged view ``final`` holds exactly what the commit wrote: every written file
    is the record the overlay parsed (no ``contradicts`` link or provenance stamp spliced in
    since), every removed path is gone, and each is a path a version reads as a memory. Then
    the view's indexes are the landed commit's version, and a follower need not parse again."""
    for path, html in writes.items():
        record = final.record(path)
        if not is_memory_path(path) or record is None:
            return False
        if record.blob_sha != str(pygit2.hash(html.encode("utf-8"))):
            return False
    return all(is_memory_path(path) and final.record(path) is None for path in removes)


def commit_session(
    repo: pygit2.Repository,
    state: SessionState,
    *,
    versions: VersionSource,
    overlay: Overlay,
    record: Callable[[Event], None],
    now: datetime,
    message: str | None = None,
    cap: int = BATCH_CAP,
    before_swap: Callable[[], None] | None = None,
    judged: Judgement | None = None,
    provenance: Provenance | None = None,
    index: IndexBehind | None = None,
    on_landed: Callable[[str, View], None] | None = None,
) -> CommitResult:
    """Run the commit path for one session; ``record`` durably logs an event for it.

    ``before_swap`` is a test seam that runs between the intent and the ref swap (a place to
    move the branch behind our back); the daemon passes None. ``judged`` is a judgement of
    exactly these ops on exactly this base that the caller already holds (``apply`` judged them
    as they arrived and nothing changed since); judging is pure, so it is not redone.
    ``provenance`` is stamped into every written file's head after judging (a head splice, like
    the ``contradicts`` links, so the judged content hashes hold) and into the trailers.
    ``index`` takes the index entries the commit owes git's index (``land``). ``on_landed``
    is given the landed commit and the judged view when that view is the commit's version
    (``as_judged``), so a follower can take it instead of advancing.
    """
    at = iso(now)
    base = state.base
    version = versions.version(base)
    verdict = judged if judged is not None else judge(version, state.ops, overlay, cap=cap)
    crash_point("validated")
    if verdict.violations:
        return CommitResult(outcome=REFUSED, violations=verdict.violations)
    if verdict.deduped:
        record(Dropped(indexes=tuple(d.op for d in verdict.deduped), at=at))
    deduped = verdict.deduped or None

    tip = git_io.resolve_ref(repo, state.ref)
    touched = _ordered_touched(state, verdict.accepted)
    if tip is not None and tip != base:
        overlapping = sorted(set(touched) & git_io.changed_paths(repo, base, tip))
        return CommitResult(outcome=REBASE_NEEDED, sha=tip, overlapping=tuple(overlapping))

    linked = symlink_violations(
        repo, base, state.ref, ((i, state.ops[i]) for i in verdict.accepted)
    )
    if linked:
        return CommitResult(outcome=REFUSED, violations=tuple(linked))

    final = verdict.view
    writes: dict[str, str] = {}
    removes: list[str] = []
    read_blob = functools.partial(git_io.blob_text, repo)
    for path in touched:
        now_record = final.record(path)
        if now_record is None:
            removes.append(path)
        else:
            writes[path] = record_text(final, now_record, read_blob)
    contradictions = _mark_contradictions(version, final, state, verdict.accepted, writes)
    if provenance is not None:
        writes = {path: stamp_provenance(html, provenance) for path, html in writes.items()}

    who = git_io.signature(repo, now)
    text = commit_message(message, state.session, len(touched), provenance)
    sha = git_io.write_commit(repo, base, writes, removes, text, who)
    crash_point("objects")
    if repo[sha].peel(pygit2.Commit).tree_id == repo[base].peel(pygit2.Commit).tree_id:
        # Nothing changes the tree (every write deduped, or edits that cancel out).
        record(Settled(commit=base, landed=True, recovered=False, at=at))
        return CommitResult(outcome=COMMITTED, sha=base, paths=(), deduped=deduped)
    paths = tuple(sorted(set(writes) | set(removes)))
    landed = land(
        repo,
        state,
        sha=sha,
        tip=tip,
        paths=paths,
        touched=touched,
        record=record,
        at=at,
        before_swap=before_swap,
        index=index,
    )
    if landed is not None:
        return landed
    if on_landed is not None and as_judged(final, writes, removes):
        on_landed(sha, final)
    return CommitResult(
        outcome=COMMITTED,
        sha=sha,
        paths=paths,
        contradictions=tuple(contradictions),
        deduped=deduped,
        worktree_synced=git_io.head_branch(repo) == state.ref,
    )


def _write_owed(repo: pygit2.Repository, index: IndexBehind | None) -> None:
    """Before a settlement moves the checkout back, the index entries earlier commits owe are
    written: the move back compares the index with this commit's parent."""
    if index is None:
        return
    try:
        index.flush(repo)
    except HeaddError as exc:
        log.warning("writing git's index before moving the checkout back failed: %s", exc)


def land(
    repo: pygit2.Repository,
    state: SessionState,
    *,
    sha: str,
    tip: str | None,
    paths: tuple[str, ...],
    touched: Iterable[str],
    record: Callable[[Event], None],
    at: str,
    before_swap: Callable[[], None] | None = None,
    index: IndexBehind | None = None,
) -> CommitResult | None:
    """Steps 5 to 7 for a written commit ``sha`` on ``state.base``: refuse dirty checkout
    paths, log the intent, bring the checkout along, compare-and-swap the branch, log the
    settlement. None when it landed; otherwise the answer (refused, or rebase-needed after a
    lost race; ``touched`` are the paths such an answer may name as overlapping). Shared by
    sessions and by ``publish``, whose files are no memories.

    With ``index``, the work-tree files move before the swap and git's index entries are left
    owed to it (recorded before the swap, owed once it landed; its ``flush`` writes them), so
    the answer does not wait for the index's whole-file rewrite; without, the index moves with
    the files."""
    base = state.base
    follow = git_io.head_branch(repo) == state.ref
    owed = index.owed if index is not None else git_io.EMPTY_OWED
    if follow:
        dirty = git_io.dirty_paths(repo, base, paths, owed)
        if dirty:
            return CommitResult(
                outcome=REFUSED,
                violations=(Violation(kind="worktree-dirty", paths=tuple(dirty)),),
            )

    intent = Intent(commit=sha, parent=base, ref=state.ref, paths=paths, worktree=follow, at=at)
    record(intent)
    crash_point("intent")
    moves: list[git_io.IndexMove] = []
    try:
        if follow and index is not None:
            moves = git_io.move_checkout(repo, base, sha, paths, owed)[1]
            index.expect(sha, moves)
        elif follow:
            git_io.move_worktree(repo, base, sha, paths)
        crash_point("worktree")
        if before_swap is not None:
            before_swap()
        swapped = git_io.swap_ref(
            repo, state.ref, sha, tip, f"headd: session {state.session} commit"
        )
        crash_point("swapped")
    except (HeaddError, OSError, pygit2.GitError):
        _write_owed(repo, index)
        record(recovery.settle(repo, intent, at, recovered=False))
        raise
    if not swapped:
        _write_owed(repo, index)
        record(recovery.settle(repo, intent, at, recovered=False))
        moved = git_io.resolve_ref(repo, state.ref)
        overlapping = (
            sorted(set(touched) & git_io.changed_paths(repo, base, moved)) if moved else []
        )
        log.info("session %s lost the race for %s", state.session, state.ref)
        return CommitResult(outcome=REBASE_NEEDED, sha=moved, overlapping=tuple(overlapping))
    if index is not None:
        index.landed(moves)
    record(Settled(commit=sha, landed=True, recovered=False, at=at))
    crash_point("settled")
    return None
