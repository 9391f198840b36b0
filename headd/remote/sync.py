"""One sync round with a git remote, and the state ``status.remote`` reports.

A round, always under the caller's commit lock for the part that moves the local branch:

1. Fetch the followed branch's upstream ``NAME/<branch>``.
2. Local and remote agree: nothing to do. Local is behind: move it forward (a compare-and-swap,
   the checkout brought along path by path, as a session commit brings it). Local is ahead: push.
3. Both moved: keep the local tip under a rescue ref, replay the local-only commits onto the
   remote tip (``replay``), move the local branch to the replay, push it.
4. A push the remote refuses because it moved meanwhile: fetch, replay, retry with jittered
   backoff, a bounded number of times, then report. Any other failure is reported with its kind
   at once; only a network failure is called transient.

Rescue refs left by a round that did not finish (a crash, a refused push) are replayed again on
the next one; replaying is idempotent, so this never writes anything twice. A rescue ref is
dropped only after the remote accepted a push carrying its replay. Never a force-push, never a
merge commit, never conflict markers.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from headd.errors import HeaddError
from headd.remote import rescue, transport
from headd.remote.replay import replay_commit
from headd.remote.transport import RemoteFailure
from headd.remote.tree_check import TreeJudge
from headd.store import git_io
from headd.store.ports import Overlay, VersionSource
from headd.wire.remote_answers import (
    Action,
    Conflict,
    RemoteError,
    RemoteStatus,
    RoundReport,
)

log = logging.getLogger(__name__)


def _as_failure(exc: Exception) -> RemoteFailure:
    """Any exception of a round as a failure with a kind a person understands: a work-tree or
    git failure after the fetch is ``checkout``, anything else ``internal`` (a bug: logged with
    its traceback once)."""
    if isinstance(exc, HeaddError):
        kind: transport.FailureKind = (
            "checkout" if exc.code in ("ERR_GIT", "ERR_STORAGE") else "internal"
        )
        failure = RemoteFailure(kind, exc.message, path=exc.details.get("path"))
    elif isinstance(exc, OSError | pygit2.GitError):
        failure = RemoteFailure("checkout", f"{type(exc).__name__}: {exc}")
    else:
        failure = RemoteFailure("internal", f"{type(exc).__name__}: {exc}")
    failure.__cause__ = exc
    return failure


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Plan:
    """What a round decided under the lock: push ``push`` (if any), then drop ``drops``."""

    action: Action
    local: str | None
    remote: str | None
    push: str | None = None
    drops: set[str] = field(default_factory=set)
    replayed: int = 0
    deduped: int = 0
    conflicts: list[str] = field(default_factory=list)


class RemoteSync:
    """Keeps one store's branch in step with ``remote``'s branch of the same name.

    Thread-safe: rounds are serialized by their own lock; the part that moves the local branch
    also holds ``lock`` (the session manager's commit lock), so a round and a session commit never
    interleave. Opens its own repository, used only inside a round.
    """

    def __init__(
        self,
        store: Path,
        remote: str,
        ref: str,
        *,
        versions: VersionSource,
        overlay: Overlay,
        lock: Callable[[], AbstractContextManager[object]] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        attempts: int = 6,
        backoff: float = 0.2,
        timeout: float = transport.DEFAULT_TIMEOUT,
    ) -> None:
        if not ref.startswith("refs/heads/"):
            raise ValueError(f"only a branch can follow a remote, not {ref}")
        self.store = store
        self.remote = remote
        self.ref = ref
        self.branch = ref.removeprefix("refs/heads/")
        self.versions = versions
        self.overlay = overlay
        self._lock = lock or nullcontext
        self.clock = clock
        self.attempts = attempts
        self.backoff = backoff
        self.timeout = timeout
        self.conflict_book = rescue.ConflictBook(store)
        self._round_lock = threading.Lock()
        self._repo: pygit2.Repository | None = None
        #: ``status`` runs on the caller's thread, beside a round: a handle of its own per thread
        #: (libgit2 repository handles are not shared between threads).
        self._status_repos = threading.local()
        self.last_fetch_at: str | None = None
        self.last_push_at: str | None = None
        self.last_error: RemoteError | None = None
        #: The last failure logged, so a failure repeated every round is logged once.
        self._logged: tuple[str, str, str | None, str | None] | None = None
        self._judge = TreeJudge()
        #: The git commands of the round under way, killed as process groups by ``close``.
        self.running = transport.Running()
        self._url = transport.remote_url(store, remote)

    @property
    def upstream(self) -> str:
        return f"{self.remote}/{self.branch}"

    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = git_io.open_repo(self.store)
        return self._repo

    # --- the round -----------------------------------------------------------------------------

    def round(self) -> RoundReport:
        """Fetch, then bring local and remote together; see the module docstring."""
        with self._round_lock:
            attempt = 0
            tracking = transport.tracking_ref(self.remote, self.branch)
            fetched_before = git_io.resolve_ref(self.repo(), tracking)
            while True:
                attempt += 1
                try:
                    return self._attempt(attempt, fetched_before)
                except RemoteFailure as failure:
                    if failure.kind == "non-fast-forward" and attempt < self.attempts:
                        delay = self.backoff * (2 ** (attempt - 1)) * (0.5 + random.random())
                        log.info("push refused, the remote moved; retrying in %.2f s", delay)
                        time.sleep(delay)
                        continue
                    return self._failed(failure, attempt)
                except Exception as exc:  # every failed round is visible, whatever failed
                    return self._failed(_as_failure(exc), attempt)

    def _failed(self, failure: RemoteFailure, attempt: int) -> RoundReport:
        error = self._fail(failure)
        repo = self.repo()
        return RoundReport(
            action="failed",
            local=git_io.resolve_ref(repo, self.ref),
            remote=git_io.resolve_ref(repo, transport.tracking_ref(self.remote, self.branch)),
            attempts=attempt,
            error=error,
        )

    def push_local(self) -> RoundReport:
        """After a local commit: push the tip as it is, without a fetch first; fall back to a
        whole round when that push is refused because the remote moved (or work is rescued)."""
        with self._round_lock:
            repo = self.repo()
            local = git_io.resolve_ref(repo, self.ref)
            upstream = git_io.resolve_ref(repo, transport.tracking_ref(self.remote, self.branch))
            if local is not None and upstream is not None and not rescue.rescues(repo):
                if local == upstream:
                    return RoundReport(
                        action="up-to-date", local=local, remote=upstream, attempts=0
                    )
                if git_io.is_ancestor(repo, upstream, local):
                    try:
                        transport.push(
                            self.store, self.remote, local, self.branch, self.timeout, self.running
                        )
                    except RemoteFailure as failure:
                        if failure.kind != "non-fast-forward":
                            error = self._fail(failure)
                            return RoundReport(
                                action="failed",
                                local=local,
                                remote=upstream,
                                attempts=1,
                                error=error,
                            )
                    else:
                        self.last_push_at = _iso(self.clock())
                        self._succeeded()
                        return RoundReport(action="pushed", local=local, remote=local, attempts=1)
        return self.round()

    def _fail(self, failure: RemoteFailure) -> RemoteError:
        error = RemoteError(
            kind=failure.kind,
            message=failure.message,
            transient=failure.transient,
            at=_iso(self.clock()),
            commit=failure.commit,
            path=failure.path,
        )
        self.last_error = error
        key = (error.kind, error.message, error.commit, error.path)
        if key == self._logged:
            return error  # logged when it first happened; status still shows it
        self._logged = key
        if failure.transient:
            log.warning("remote %s unreachable (%s): %s", self.remote, failure.kind, failure)
        elif failure.kind == "internal":
            log.error("remote %s: a round failed", self.remote, exc_info=failure.__cause__)
        else:
            log.error("remote %s refused (%s): %s", self.remote, failure.kind, failure)
        return error

    def _succeeded(self) -> None:
        self.last_error = None
        if self._logged is not None:
            log.info("remote %s: rounds succeed again", self.remote)
        self._logged = None

    def _check_tree(self, remote_tip: str | None) -> None:
        """Refuse a remote tip whose tree git would not check out, before anything moves."""
        if remote_tip is None:
            return
        repo = self.repo()
        local = git_io.resolve_ref(repo, self.ref)
        if local is not None and git_io.is_ancestor(repo, remote_tip, local):
            return  # nothing of it is new here: our own tip already holds it
        problem = self._judge.problem(repo, remote_tip)
        if problem is not None:
            raise RemoteFailure(
                "refused-tree",
                f"the remote's commit {remote_tip[:12]} is refused: {problem.path!r} is "
                f"{problem.reason}; nothing of it was checked out, and the remote must change",
                commit=remote_tip,
                path=problem.path,
            )

    def _attempt(self, attempt: int, fetched_before: str | None) -> RoundReport:
        remote_tip = transport.fetch(
            self.store, self.remote, self.branch, self.timeout, self.running
        )
        self.last_fetch_at = _iso(self.clock())
        self._check_tree(remote_tip)
        forgotten = self._forgotten(fetched_before, remote_tip)
        with self._lock():
            plan = self._plan(remote_tip, forgotten)
        if plan.push is not None and plan.push != remote_tip:
            transport.push(
                self.store, self.remote, plan.push, self.branch, self.timeout, self.running
            )
            self.last_push_at = _iso(self.clock())
        rescue.drop(self.repo(), plan.drops)
        self._succeeded()
        if plan.local is not None:
            self.conflict_book.settle(self.repo(), plan.local)
        return RoundReport(
            action=plan.action,
            local=plan.local,
            remote=plan.push or remote_tip,
            attempts=attempt,
            replayed=plan.replayed,
            deduped=plan.deduped,
            new_conflicts=tuple(plan.conflicts),
        )

    def _forgotten(self, before: str | None, remote_tip: str | None) -> list[str]:
        """``[before]`` when ``headctl forget --push`` rewrote the remote's branch since the last
        fetch, else ``[]``.

        A rewrite drops commits the remote held; replaying them as ours would bring back what
        was forgotten. Only ``forget`` leaves the marker ``refs/headd/rewritten/<old tip>`` on
        the remote, so a branch someone force-pushed by hand is still replayed onto (nothing of
        ours is lost to it); the marker is looked up only when the remote's tip is not a
        descendant of the one fetched before, which ordinary rounds never see.
        """
        if before is None or remote_tip is None or before == remote_tip:
            return []
        repo = self.repo()
        if before not in repo or git_io.is_ancestor(repo, before, remote_tip):
            return []
        rewritten = transport.rewritten_tip(
            self.store, self.remote, before, self.timeout, self.running
        )
        if rewritten is None or rewritten not in repo:
            return []
        if rewritten != remote_tip and not git_io.is_ancestor(repo, rewritten, remote_tip):
            return []
        log.info("%s was rewritten by forget: its old commits are not replayed", self.upstream)
        return [before]

    def _plan(self, remote_tip: str | None, forgotten: list[str] | None = None) -> _Plan:
        forgotten = forgotten or []
        repo = self.repo()
        local = git_io.resolve_ref(repo, self.ref)
        pending = rescue.rescues(repo)
        if local is None:
            if remote_tip is None:
                return _Plan("up-to-date", None, None)
            self._move(repo, None, remote_tip)
            return _Plan("fast-forward", remote_tip, remote_tip)
        if remote_tip is None:
            return _Plan("pushed", local, None, push=local, drops=set(pending))
        if local == remote_tip and not pending:
            return _Plan("up-to-date", local, remote_tip)
        if git_io.is_ancestor(repo, local, remote_tip) and not pending:
            self._move(repo, local, remote_tip)
            return _Plan("fast-forward", remote_tip, remote_tip)

        # The base the rescued work is replayed onto: our tip when it already holds the remote's
        # (push it as it is), else our local-only commits replayed onto the remote's tip.
        plan = _Plan("pushed", local, remote_tip, drops=set(pending))
        if git_io.is_ancestor(repo, remote_tip, local) and not forgotten:
            base = local
        else:
            plan.drops.add(rescue.keep(repo, local))
            ours = self._local_only(repo, local, [remote_tip, *forgotten])
            base = self._replay(repo, ours, remote_tip, plan)
        for sha in pending.values():
            ours = self._local_only(repo, sha, [remote_tip, local, *forgotten])
            base = self._replay(repo, ours, base, plan)
        if base != local:
            self._move(repo, local, base)
            plan.action = "replayed"
        plan.local = base
        plan.push = base
        return plan

    @staticmethod
    def _local_only(repo: pygit2.Repository, tip: str, hide: list[str]) -> list[str]:
        """Commits reachable from ``tip`` and from none of ``hide``, oldest first; merge commits
        are skipped (their changes are replayed through the commits they merged)."""
        walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for sha in hide:
            walker.hide(sha)
        return [str(c.id) for c in walker if len(c.parents) <= 1]

    def _replay(self, repo: pygit2.Repository, commits: list[str], onto: str, plan: _Plan) -> str:
        tip = onto
        for sha in commits:
            done = replay_commit(
                repo, sha, tip, versions=self.versions, overlay=self.overlay, now=self.clock()
            )
            plan.replayed += 1
            plan.deduped += len(done.deduped)
            for path in done.conflicts:
                self.conflict_book.add(repo, path, sha, done.tip, _iso(self.clock()))
                plan.conflicts.append(path)
            tip = done.tip
        return tip

    def _move(self, repo: pygit2.Repository, old: str | None, new: str) -> None:
        """Move the local branch ``old`` → ``new``: the checkout first (idempotent, and a path
        with local edits is left alone), then the compare-and-swap."""
        if old is not None and git_io.head_branch(repo) == self.ref:
            git_io.move_worktree(repo, old, new, git_io.changed_paths(repo, old, new))
        if not git_io.swap_ref(repo, self.ref, new, old, f"headd: sync with {self.upstream}"):
            # Someone outside headd moved the branch meanwhile: the next attempt starts over.
            raise RemoteFailure("non-fast-forward", f"{self.ref} moved during the sync")

    # --- what status reports -------------------------------------------------------------------

    def status(self) -> RemoteStatus:
        repo: pygit2.Repository | None = getattr(self._status_repos, "repo", None)
        if repo is None:
            repo = self._status_repos.repo = git_io.open_repo(self.store)
        local = git_io.resolve_ref(repo, self.ref)
        upstream = git_io.resolve_ref(repo, transport.tracking_ref(self.remote, self.branch))
        ahead = behind = 0
        try:
            if local is not None and upstream is not None:
                ahead, behind = repo.ahead_behind(local, upstream)
            elif local is not None:
                ahead = sum(1 for _ in repo.walk(local))
        except pygit2.GitError:
            # A ref that names no commit (moved by hand, or by git outside headd): status still
            # answers, and last_error says what the round found.
            ahead = behind = 0
        return RemoteStatus(
            name=self.remote,
            url=self._url,
            upstream=self.upstream,
            ahead=ahead,
            behind=behind,
            last_fetch_at=self.last_fetch_at,
            last_push_at=self.last_push_at,
            last_error=self.last_error,
            conflicts=tuple(self.conflict_book.open(repo)),
            rescues=len(rescue.rescues(repo)),
        )

    def close(self) -> None:
        """End the git a round is waiting on, with everything it started; start no other."""
        self.running.kill_all()

    def resolve(self, path_or_id: str) -> tuple[Conflict, ...]:
        with self._round_lock:
            return tuple(self.conflict_book.resolve(self.repo(), path_or_id))
