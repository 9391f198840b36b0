"""``SessionManager``: the session methods the daemon calls, synchronous and thread-safe.

The daemon runs each call in a worker thread. State is a dict of immutable ``SessionState``
values (swapped under one short lock); each session has its own lock, taken without waiting, so a
second call on a session that is mid-apply or mid-commit fails at once with ``ERR_SESSION_LOCKED``
instead of interleaving; commits of different sessions run one at a time under the commit lock
(the working tree and the index are shared), and the ref swap still compares-and-swaps against
writers outside this process.

Every change is logged (``session_log``) before it is visible, so a restart replays exactly what
was answered; at start, every session whose log ends in a commit intent is settled, and the next
``commit`` of that session reports the settlement as ``recovered``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pygit2
from msgspec.structs import replace

from headd.errors import (
    GitFailure,
    HeaddError,
    InvalidMemory,
    InvalidParams,
    SessionLocked,
    SessionNotFound,
    WriteConflict,
)
from headd.ops import Op, OverlayOp
from headd.secrets.door import check_commit, check_ops
from headd.store import git_io, locks, ports, recovery
from headd.store.commit import (
    SESSION_TRAILER,
    Provenance,
    commit_session,
    iso,
    land,
    symlink_violations,
)
from headd.store.index_behind import IndexBehind
from headd.store.ports import Overlay, VersionSource, View
from headd.store.resolve import resolve_ops
from headd.store.results import (
    COMMITTED,
    REBASE_AUTO,
    REBASE_MODES,
    REBASE_NEEDED,
    REFUSED,
    ApplyResult,
    CloseResult,
    CommitResult,
    Deduped,
    ListResult,
    OpenResult,
    RebaseResult,
    SessionInfo,
    Settlement,
    Violation,
)
from headd.store.session_log import SessionLog
from headd.store.sessions import (
    Applied,
    Closed,
    CorruptLog,
    Dropped,
    Event,
    Intent,
    LoggedOp,
    Opened,
    Rebased,
    SessionState,
    Settled,
    check_session_id,
    fold,
    step,
)
from headd.store.validate import BATCH_CAP, Judgement, judge, touched_paths
from headd.store.versions import GitVersions

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

#: How long a session nobody closes stays open once it holds nothing unlanded (a day: an agent's
#: working session, with a night's pause, fits). docs/design/mcp.md gives the rule.
SESSION_IDLE_S = 24 * 3600.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def _settlement(session: str, state: SessionState) -> Settlement | None:
    settled = state.last_settled
    if settled is None:
        return None
    return Settlement(session=session, sha=settled.commit, landed=settled.landed, at=settled.at)


class SessionManager:
    def __init__(
        self,
        repo_path: str | Path,
        ref: str | None = None,
        clock: Clock = utc_now,
        *,
        versions: VersionSource | None = None,
        overlay: Overlay | None = None,
        cap: int = BATCH_CAP,
    ) -> None:
        self.store = Path(repo_path)
        repo = git_io.open_repo(self.store)  # the commit path's, below
        self.ref = git_io.full_ref(repo, ref)
        self.clock = clock
        self.versions: VersionSource = versions or GitVersions(self.store)
        #: The overlay a caller passed (tests); None: the head's, reading blobs from the store.
        #: Not a bound method kept on the instance: that would be a reference cycle, which
        #: only the cyclic collector frees (and the store lock lives as long as the manager).
        self._given_overlay = overlay
        self.cap = cap
        self.log = SessionLog(self.store)
        #: A test seam passed to the commit path (runs just before the ref swap).
        self.before_swap: Callable[[], None] | None = None
        self._states: dict[str, SessionState] = {}
        #: Per session: (base, op count, view, judgement when the view came from one).
        self._views: dict[str, tuple[str, int, View, Judgement | None]] = {}
        self._registry = threading.Lock()
        self._busy: dict[str, threading.Lock] = {}
        self._commit_lock = threading.Lock()
        self._unreported: dict[str, Settlement] = {}
        #: Sessions whose latest ``apply`` was refused, and why: an empty session's commit then
        #: refuses with those violations rather than answering ``committed`` having landed
        #: nothing (in memory only: a restart forgets it, and the commit is then a no-op).
        self._refused: dict[str, tuple[Violation, ...]] = {}
        #: Sessions whose log ends in a landing that is not compacted yet (see ``_record``).
        self._uncompacted: set[str] = set()
        #: (idle seconds, the clock's timestamp before which no session can be idle that long):
        #: set by each sweep of ``expire_idle``.
        self._no_expiry_before: tuple[float, float] = (0.0, -math.inf)
        #: The repository the commit path uses, only under the commit lock. Kept open so its
        #: index (the whole checkout's, ~1 MB at 10,000 files) is parsed once and re-read only
        #: when the file changes on disk, not on every commit.
        self._commit_repo = repo
        #: Each calling thread's own repository for the reads outside the commit lock (tips,
        #: bases, tree lookups). Opened once per thread, not per call: a ``pygit2.Repository``
        #: is a reference cycle (it holds helpers that point back at it), so one opened per call
        #: is garbage only the cyclic collector frees; the daemon freezes the collector's
        #: generations after each new version, and would never free them.
        self._thread_repos = threading.local()
        if not repo.is_bare:
            git_io.ensure_excluded(repo, "/.memhtml/headd/")
        #: Held while the manager lives: only its holder may recover git's stale locks.
        self._store_lock = locks.StoreLock(repo.path)
        with contextlib.suppress(GitFailure):
            self._recover_locks()  # a live holder's lock: settling below will say so
        #: The last commit and its judged view, when that view is the commit's version.
        self._landed: tuple[str, View] | None = None
        #: The index entries landed commits owe git's index (written by ``flush_index``); those
        #: a killed process left owed are written first, before any settlement writes the index.
        self._index = IndexBehind(self.store)
        if not repo.is_bare:
            self._index.recover(repo, self.ref)
        #: What the start settled: one entry per interrupted commit found in the logs.
        self.recovered: tuple[Settlement, ...] = self._load()

    def _recover_locks(self) -> None:
        """Remove git lock files a killed process left (the rule in ``locks``): at start,
        before settling, and before each commit, so a crash never leaves the store stuck. A
        lock somebody alive holds refuses the call (``ERR_GIT`` naming it) before anything is
        written, so a busy git never leaves a half-done commit to settle."""
        repo = self._commit_repo
        workdir = Path(repo.workdir) if repo.workdir else None
        left = locks.recover(self._store_lock, Path(repo.path), workdir, self.ref)
        if left:
            raise GitFailure(
                f"{left[0]} is held by another git process; nothing was written, try again",
                {"lock": str(left[0])},
            )

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The commit lock, for the other writers of the branch (the remote sync, a sleep
        merge), with git's index written first: held, no session commit moves the branch or
        the checkout, and the index holds every landed commit's entries."""
        with self._commit_lock:
            self._index.flush(self._commit_repo)
            yield

    def _keep_landed(self, sha: str, view: View) -> None:
        with self._registry:
            self._landed = (sha, view)

    def take_landed(self, sha: str) -> View | None:
        """The view the last commit was judged on with its ops applied, when that is exactly
        commit ``sha``'s version (``commit.as_judged``): the daemon's follower takes it instead
        of advancing, so a commit parses and freezes its files once. Taken once."""
        with self._registry:
            landed, self._landed = self._landed, None
        if landed is None or landed[0] != sha:
            return None
        return landed[1]

    def flush_index(self) -> None:
        """Write the index entries landed commits owe git's index (``index_behind``), under the
        commit lock; the daemon calls it when its commits pause, before it reads ``git status``,
        and as it stops."""
        with self._commit_lock:
            self._index.flush(self._commit_repo)

    def _repo(self) -> pygit2.Repository:
        """This thread's repository for reads (see ``_thread_repos``)."""
        repo: pygit2.Repository | None = getattr(self._thread_repos, "repo", None)
        if repo is None:
            repo = git_io.open_repo(self.store)
            self._thread_repos.repo = repo
        return repo

    # --- persistence -----------------------------------------------------------------------

    def _load(self) -> tuple[Settlement, ...]:
        settled = []
        for session_id in self.log.ids():
            try:
                events = self.log.read(session_id)
                if not events:  # killed while writing its first line: it never opened
                    self.log.remove(session_id)
                    continue
                state = fold(events)
            except (CorruptLog, HeaddError) as exc:
                log.error("session %s: unreadable log left in place (%s)", session_id, exc)
                continue
            if state.closed:
                self.log.remove(session_id)
                continue
            self._states[session_id] = state
            self._busy[session_id] = threading.Lock()
            last = events[-1]
            if len(events) > 2 and isinstance(last, Settled) and last.landed:
                self._uncompacted.add(session_id)
            if state.pending is not None:
                settled.append(self._settle(session_id))
        return tuple(settled)

    def _record(self, session_id: str, event: Event) -> None:
        """Log an event, then make it visible; only an ``Intent`` is fsynced.

        A log whose ops landed is compacted by the next event logged after the landing, not by
        the landing itself: the commit then pays no compaction's three fsyncs (temp file,
        directory), and a session closed after its commit, the common case, never pays for a
        compaction whose log it deletes.

        Every line is written before the call answers, so a killed process loses none of them
        (they sit in the kernel's page cache). The fsync only matters for a power cut, and there
        only the intent needs it: it must be on disk before the checkout moves, so a restart can
        undo a half-followed checkout. An fsync flushes the whole file, so the session's earlier
        lines (open, apply, rebase, dropped) reach the disk with its intent: an acknowledged
        commit is durable with all its ops. The ``Settled`` after an intent is re-derived from git
        by a restart (``recovery``). What a power cut can take is a session's unlanded state (an
        open, an apply not yet committed, a close), the same class as git's own ref update, which
        libgit2 does not fsync either. docs/design/store.md, "Which lines are fsynced".
        """
        with self._registry:
            before = self._states[session_id]
            state = step(before, event)
        if session_id in self._uncompacted and not isinstance(event, Closed):
            self._log_compacted(before, event)
        else:
            self.log.append(session_id, event, durable=isinstance(event, Intent))
        if isinstance(event, Settled) and event.landed:
            self._uncompacted.add(session_id)
        else:
            self._uncompacted.discard(session_id)
        with self._registry:
            self._states[session_id] = state

    def _log_compacted(self, landed: SessionState, event: Event) -> None:
        """Replace the log with the two events that fold to ``landed`` (the state its last
        landing left, nothing logged since) followed by ``event``, in one atomic rewrite; when
        that fails, ``event`` is appended to the long log, which replays the same."""
        assert landed.last_settled is not None
        opened = Opened(
            session=landed.session, base=landed.base, ref=landed.ref, at=landed.opened_at
        )
        try:
            self.log.rewrite(landed.session, opened, landed.last_settled, event)
        except HeaddError:
            log.warning(
                "session %s: compacting its log failed; the long log stands", landed.session
            )
            self.log.append(landed.session, event, durable=isinstance(event, Intent))

    def _settle(self, session_id: str) -> Settlement:
        """Settle the session's pending commit (held by the caller or at start)."""
        with self._commit_lock:
            self._recover_locks()
            self._index.flush(self._commit_repo)
            state = self._states[session_id]
            assert state.pending is not None
            event = recovery.settle(self._commit_repo, state.pending, iso(self.clock()))
            self._record(session_id, event)
        settlement = Settlement(
            session=session_id, sha=event.commit, landed=event.landed, at=event.at
        )
        self._unreported[session_id] = settlement
        return settlement

    # --- helpers ---------------------------------------------------------------------------

    def _state(self, session_id: str) -> SessionState:
        with self._registry:
            state = self._states.get(session_id)
        if state is None:
            raise SessionNotFound(f"no open session {session_id!r}", {"session": session_id})
        return state

    @contextmanager
    def _hold(self, session_id: str) -> Iterator[SessionState]:
        """The session's lock, without waiting; settles a pending commit first."""
        self._state(session_id)
        with self._registry:
            lock = self._busy.get(session_id)
        if lock is None:
            raise SessionNotFound(f"no open session {session_id!r}", {"session": session_id})
        if not lock.acquire(blocking=False):
            raise SessionLocked(
                f"session {session_id!r} is busy with another call", {"session": session_id}
            )
        try:
            if self._state(session_id).pending is not None:
                self._settle(session_id)
            yield self._state(session_id)
        finally:
            lock.release()

    def read_blob(self, blob: str) -> str:
        """The text of a blob, through this thread's repository (a record's file by its id)."""
        return git_io.blob_text(self._repo(), blob)

    @property
    def overlay(self) -> Overlay:
        """The overlay ops fold through: the given one, else :meth:`_overlay`."""
        return self._given_overlay or self._overlay

    def _overlay(self, view: View, ops: Sequence[OverlayOp]) -> View:
        """The default overlay: the head's, reading the texts of git's records from the store."""
        return ports.with_overlay(view, ops, self.read_blob)

    def _in_tree(self, sha: str) -> Callable[[str], bool]:
        """Whether the tree at ``sha`` holds a file at a path its version holds no memory at (a
        skipped or foreign file): a memory of the base is the session's view to judge, so a
        path the session archived is free again."""
        repo = self._repo()
        base = self.versions.version(sha)

        def holds(path: str) -> bool:
            return base.record(path) is None and git_io.blob_at(repo, sha, path) is not None

        return holds

    def _view_of(self, state: SessionState) -> View:
        cached = self._views.get(state.session)
        if cached is not None and cached[0] == state.base and cached[1] == len(state.ops):
            return cached[2]
        view = self.versions.version(state.base)
        if state.ops:
            view = self.overlay(view, state.overlay_ops)
        self._views[state.session] = (state.base, len(state.ops), view, None)
        return view

    def _judged(self, state: SessionState) -> Judgement | None:
        """The judgement of all the session's ops on its base, if ``apply`` left one current."""
        cached = self._views.get(state.session)
        if cached is None or cached[0] != state.base or cached[1] != len(state.ops):
            return None
        return cached[3]

    def _extend(self, state: SessionState, view: View, count: int) -> Judgement | None:
        """After a clean ``apply``: the whole log judged clean on the base, if it was before.

        Judging is a fold, so a clean judgement of the old log followed by a clean judgement of
        the appended ops is the judgement of the whole log.
        """
        if state.ops and self._judged(state) is None:
            return None
        return Judgement((), (), view, tuple(range(count)))

    def _tip(self) -> str:
        repo = self._repo()
        tip = git_io.resolve_ref(repo, self.ref)
        if tip is None:
            raise GitFailure(f"{self.ref} does not exist", {"ref": self.ref})
        return tip

    def _info(self, state: SessionState) -> SessionInfo:
        return SessionInfo(
            session=state.session,
            base=state.base,
            ref=state.ref,
            ops=len(state.ops),
            opened_at=state.opened_at,
            updated_at=state.updated_at,
            pending=state.pending.commit if state.pending is not None else None,
            last_settlement=_settlement(state.session, state),
        )

    # --- the methods -----------------------------------------------------------------------

    def open(self, id: str | None = None, base: str | None = None) -> OpenResult:
        """Open a session on ``base`` (default: the branch tip); reopening an id resumes it."""
        session_id = check_session_id(id) if id is not None else f"s-{uuid.uuid4().hex[:16]}"
        repo = self._repo()
        sha = git_io.resolve_commit(repo, base) if base is not None else self._tip()
        event = Opened(session=session_id, base=sha, ref=self.ref, at=iso(self.clock()))
        with self._registry:
            existing = self._states.get(session_id)
            if existing is None:
                # Claimed before the log is written, so two opens of one id write one Opened.
                busy = threading.Lock()
                busy.acquire()  # held until the log says Opened: no call can log before it
                self._states[session_id] = step(None, event)
                self._busy[session_id] = busy
        if existing is not None:
            if base is not None and existing.base != sha:
                raise WriteConflict(
                    f"session {session_id!r} is open on another base",
                    {"session": session_id, "base": existing.base},
                )
            return OpenResult(session=session_id, base=existing.base)
        try:
            self.log.append(session_id, event, durable=False)  # see ``_record``
        except HeaddError:
            with self._registry:
                self._states.pop(session_id, None)
                self._busy.pop(session_id, None)
            raise
        finally:
            busy.release()
        return OpenResult(session=session_id, base=sha)

    def view(self, session: str) -> View:
        """The session's read-through view: its base with its ops applied."""
        return self._view_of(self._state(session))

    def apply(self, session: str, ops: Sequence[Op]) -> ApplyResult:
        """Judge ``ops`` on the session's view and append them all, or none when one fails."""
        with self._hold(session) as state:
            first = len(state.ops)
            check_ops(ops, first)  # the write door: a credential refuses the whole batch
            now = self.clock()
            view = self._view_of(state)
            resolved = resolve_ops(ops, view, self._in_tree(state.base), now, self.read_blob)
            violations: list[Violation] = []
            good: list[LoggedOp] = []
            positions: list[int] = []
            for offset, item in enumerate(resolved):
                if isinstance(item, LoggedOp):
                    good.append(item)
                    positions.append(first + offset)
                else:
                    reasons = (
                        item.violations if isinstance(item, InvalidMemory) else (item.message,)
                    )
                    path = getattr(ops[offset], "path", None)
                    violations.append(
                        Violation(
                            kind="format", path=path, op=first + offset, reasons=tuple(reasons)
                        )
                    )
            violations.extend(
                symlink_violations(
                    self._repo(), state.base, state.ref, zip(positions, good, strict=True)
                )
            )
            verdict = judge(view, good, self.overlay, total=first + len(ops), cap=self.cap)
            # judge numbers ops by their place in ``good``; report them by their place in the log.
            for v in verdict.violations:
                violations.append(v if v.op is None else replace(v, op=positions[v.op]))
            deduped = tuple(
                Deduped(op=positions[d.op], existing=d.existing) for d in verdict.deduped
            )
            if violations:
                violations.sort(key=lambda v: -1 if v.op is None else v.op)
                self._refused[session] = tuple(violations)
                return ApplyResult(
                    session=session, ops=first, violations=tuple(violations), deduped=deduped
                )
            self._refused.pop(session, None)
            kept = tuple(good[i] for i in verdict.accepted)
            if kept:
                self._record(session, Applied(ops=kept, at=iso(now)))
                self._views[session] = (
                    state.base,
                    first + len(kept),
                    verdict.view,
                    self._extend(state, verdict.view, first + len(kept)),
                )
            dedup_at = {d.op: d.existing for d in deduped}
            paths = []
            for offset, item in enumerate(resolved):
                position = first + offset
                if position in dedup_at:
                    paths.append(dedup_at[position])
                elif isinstance(item, LoggedOp):
                    paths.append(touched_paths(item.op)[-1])
            return ApplyResult(
                session=session, ops=first + len(kept), deduped=deduped, paths=tuple(paths)
            )

    def _judge_at(self, state: SessionState, sha: str) -> Judgement:
        return judge(self.versions.version(sha), state.ops, self.overlay, cap=self.cap)

    def _move_onto(self, session: str, state: SessionState, sha: str, verdict: Judgement) -> None:
        """Log the session's move onto ``sha`` (and the writes ``verdict``, its ops judged
        there, dedupes); keep the judgement for ``commit`` when the log is unchanged by it."""
        at = iso(self.clock())
        self._record(session, Rebased(onto=sha, at=at))
        if verdict.deduped:
            self._record(session, Dropped(indexes=tuple(d.op for d in verdict.deduped), at=at))
        elif not verdict.violations:
            self._views[session] = (sha, len(state.ops), verdict.view, verdict)

    def rebase(self, session: str, onto: str | None = None) -> RebaseResult:
        """Move the session onto ``onto`` (default: the branch tip) and judge its ops there."""
        with self._hold(session) as state:
            repo = self._repo()
            sha = git_io.resolve_commit(repo, onto) if onto is not None else self._tip()
            verdict = self._judge_at(state, sha)
            self._move_onto(session, state, sha, verdict)
            return RebaseResult(
                session=session,
                base=sha,
                ops=len(self._state(session).ops),
                violations=verdict.violations,
                deduped=verdict.deduped,
            )

    def _rebase_at_tip(
        self, session: str, state: SessionState
    ) -> CommitResult | tuple[SessionState, tuple[Deduped, ...]]:
        """``rebase: "auto"``, under the commit lock: move a session whose base is stale onto
        the branch tip when nothing there conflicts with it, else say why.

        A real conflict is a path the session touches that the branch changed since its base
        (its ops were resolved against the old file or the old tree), or any violation of its
        ops judged at the tip (a duplicate or a claim edit that landed meanwhile); either
        answers ``rebase-needed`` and leaves the session where it was. Frame-key rivals are no
        conflict: the commit links them. Writes whose content landed meanwhile are dropped
        (reported as ``deduped``). Inside the lock the tip cannot move under the daemon, so the
        commit that follows is judged on exactly the version it lands on.
        """
        repo = self._commit_repo
        tip = git_io.resolve_ref(repo, state.ref)
        if tip is None or tip == state.base:
            return state, ()
        touched = {path for logged in state.ops for path in touched_paths(logged.op)}
        overlapping = sorted(touched & git_io.changed_paths(repo, state.base, tip))
        if overlapping:
            return CommitResult(outcome=REBASE_NEEDED, sha=tip, overlapping=tuple(overlapping))
        verdict = self._judge_at(state, tip)
        if verdict.violations:
            return CommitResult(
                outcome=REBASE_NEEDED, sha=tip, overlapping=(), violations=verdict.violations
            )
        self._move_onto(session, state, tip, verdict)
        log.debug("session %s rebased onto %s to commit", session, tip[:12])
        return self._state(session), verdict.deduped

    def commit(
        self,
        session: str,
        message: str | None = None,
        provenance: Provenance | None = None,
        rebase: str = REBASE_AUTO,
        *,
        index_later: bool = False,
    ) -> CommitResult:
        """Land the session's ops on the branch (see ``commit.py`` for the order of steps);
        ``provenance`` names the transcript the writes came from (stamped into each file).

        ``rebase`` is ``"auto"`` (a stale base is moved onto the tip inside the commit lock
        when nothing conflicts, see ``_rebase_at_tip``) or ``"never"`` (a stale base answers
        ``rebase-needed`` and the caller rebases).

        ``index_later``: answer with git's index entries still owed (the caller runs
        ``flush_index`` when its commits pause; the next commit reads them as owed, and any
        other writer of the checkout writes them first). By default they are written before
        this returns.
        """
        if rebase not in REBASE_MODES:
            raise InvalidParams(
                f"rebase must be one of {', '.join(REBASE_MODES)}", {"field": "rebase"}
            )
        check_commit(
            {"message": message}
            if provenance is None
            else {
                "message": message,
                "session_id": provenance.session_id,
                "prompt_id": provenance.prompt_id,
                "turn": provenance.turn,
            }
        )
        with self._hold(session) as state:
            recovered = self._unreported.pop(session, None)
            refused = self._refused.pop(session, None)
            if not state.ops and refused:
                # what the caller meant to land was refused: say so, naming the ops
                return CommitResult(outcome=REFUSED, violations=refused, recovered=recovered)
            if not state.ops:
                return CommitResult(
                    outcome=COMMITTED, sha=state.base, paths=(), recovered=recovered
                )
            with self._commit_lock:
                self._recover_locks()
                dropped: tuple[Deduped, ...] = ()
                if rebase == REBASE_AUTO:
                    moved = self._rebase_at_tip(session, state)
                    if isinstance(moved, CommitResult):
                        return replace(moved, recovered=recovered)
                    state, dropped = moved
                result = commit_session(
                    self._commit_repo,
                    state,
                    versions=self.versions,
                    overlay=self.overlay,
                    record=lambda event: self._record(session, event),
                    now=self.clock(),
                    message=message,
                    cap=self.cap,
                    before_swap=self.before_swap,
                    judged=self._judged(state),
                    provenance=provenance,
                    index=self._index,
                    on_landed=self._keep_landed,
                )
                if not index_later:
                    self._index.flush(self._commit_repo)
            if dropped:
                result = replace(result, deduped=dropped + (result.deduped or ()))
            if recovered is not None:
                result = replace(result, recovered=recovered)
            return result

    def publish(
        self, render: Callable[[View], Mapping[str, str]]
    ) -> tuple[int, tuple[str, ...], CommitResult]:
        """Land generated files (``render`` of the tip's view: path to text) as one session's
        commit: opened on the tip, rendered and written under the commit lock, so the files
        always describe the commit they land on (``rebase: auto`` is a regeneration, never a
        stale listing), landed by the sessions' compare-and-swap, then closed. Only files whose
        bytes differ are written; none differing is no commit. Answers the artifact count, the
        written paths and the commit's result."""
        session = self.open().session
        try:
            with self._hold(session) as opened, self._commit_lock:
                self._recover_locks()
                self._index.flush(self._commit_repo)
                tip = self._tip()
                state = replace(opened, base=tip)
                repo = self._commit_repo
                files = render(self.versions.version(tip))
                writes = {
                    path: text
                    for path, text in files.items()
                    if git_io.blob_at(repo, tip, path) != str(pygit2.hash(text.encode("utf-8")))
                }
                paths = tuple(sorted(writes))
                if not paths:
                    return len(files), (), CommitResult(outcome=COMMITTED, sha=tip, paths=())
                at = iso(self.clock())
                who = git_io.signature(repo, self.clock())
                subject = f"memhtml(publish): regenerate {len(files)} generated artifacts"
                text = f"{subject}\n\n{SESSION_TRAILER}: {session}\n"
                sha = git_io.write_commit(repo, tip, writes, [], text, who)
                landed = land(
                    repo,
                    state,
                    sha=sha,
                    tip=tip,
                    paths=paths,
                    touched=paths,
                    record=lambda event: self._record(session, event),
                    at=at,
                    before_swap=self.before_swap,
                )
                result = landed or CommitResult(outcome=COMMITTED, sha=sha, paths=paths)
                return len(files), paths, result
        finally:
            self.close(session)

    def close(self, session: str) -> CloseResult:
        """Close a session: its log is removed and its pending ops are dropped."""
        with self._hold(session) as state:
            self._record(session, Closed(at=iso(self.clock())))
            self.log.remove(session)
            self._refused.pop(session, None)
            with self._registry:
                self._states.pop(session, None)
                self._views.pop(session, None)
                self._unreported.pop(session, None)
                self._busy.pop(session, None)
            self._uncompacted.discard(session)
            return CloseResult(session=session, closed=True, dropped_ops=len(state.ops))

    def expire_idle(self, idle_s: float = SESSION_IDLE_S) -> tuple[str, ...]:
        """Close every session idle for ``idle_s`` seconds that holds nothing unlanded (no ops
        waiting for a commit, no commit intent); returns their ids. A session with ops waiting
        stays until it is committed or closed: expiry never drops what an agent wrote.

        The daemon sweeps as each session opens, so a sweep remembers the earliest moment any
        session can expire (every event stamps its session with the clock, which only moves
        it later) and the calls before that moment return at once, whatever the number of open
        sessions. A clock set back delays expiry by as much."""
        now = self.clock().timestamp()
        if self._no_expiry_before[0] == idle_s and now < self._no_expiry_before[1]:
            return ()
        cutoff = now - idle_s
        idle = []
        with self._registry:
            oldest = now  # a session opened from now on expires after now + idle_s
            for state in self._states.values():
                if state.ops or state.pending is not None:
                    continue  # its next event (a commit, a close) makes it fresh again
                updated = datetime.fromisoformat(state.updated_at).timestamp()
                if updated < cutoff:
                    idle.append(state.session)
                else:
                    oldest = min(oldest, updated)
            self._no_expiry_before = (idle_s, oldest + idle_s)
        expired = []
        for session in idle:
            try:
                self.close(session)
            except (SessionLocked, SessionNotFound):  # in use, or closed meanwhile
                continue
            expired.append(session)
        if len(expired) < len(idle):  # one in use stays idle: the next call sweeps again
            self._no_expiry_before = (0.0, -math.inf)
        if expired:
            log.info("closed %d session(s) idle for %.0f s", len(expired), idle_s)
        return tuple(expired)

    def list(self) -> ListResult:
        with self._registry:
            states = sorted(self._states.values(), key=lambda s: s.session)
        return ListResult(sessions=tuple(self._info(s) for s in states))

    def info(self, session: str) -> SessionInfo:
        return self._info(self._state(session))
