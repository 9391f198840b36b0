"""Following the branch: the version the daemon answers from, kept at the ref's tip.

Every request calls ``current()``: it reads the ref (one libgit2 lookup, far below a search's cost)
and, when the ref moved, advances before answering. Advances are serialized by one asyncio lock, and
the ref is read again inside it, so two requests that both saw the move cause one advance, and a
waiter never moves the version back to a tip it saw before it waited. A background task does the
same every ``poll_interval`` seconds, so an external ``git commit`` is usually picked up before
anyone asks.

Older versions (``at``) come from a small LRU: the versions the follower advanced past, plus any
commit loaded on demand by advancing from the current version (a tree diff has no direction, so
this re-parses only the paths the two commits differ on).

The heavy work (load, advance) runs on one dedicated git thread that owns its own
``pygit2.Repository``, because libgit2 repository handles must not be shared between threads;
the event loop keeps a second handle for the cheap ref reads. Each handle is opened when first
needed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

import pygit2

from headd.daemon.collector import VersionCollector
from headd.errors import GitFailure

if TYPE_CHECKING:
    from headd.daemon.coldstart import ColdStart
    from headd.head.indexes import Indexes
    from headd.head.version import HeadVersion

log = logging.getLogger(__name__)

V = TypeVar("V")

Loader = Callable[["pygit2.Repository", str], "HeadVersion"]
#: The first load by the cheapest route, on the git thread's repository: the version and the route.
ColdLoader = Callable[["pygit2.Repository", str], "ColdStart"]
Advancer = Callable[["pygit2.Repository", "HeadVersion", str], "HeadVersion"]


def resolve_followed_ref(repo: pygit2.Repository, ref: str | None) -> str:
    """The full name of the ref to follow: ``--ref`` (short or full), else the branch of HEAD."""
    if ref:
        try:
            return str(repo.lookup_reference_dwim(ref).name)
        except (KeyError, pygit2.InvalidSpecError):
            if ref.startswith("refs/"):
                return ref
            return f"refs/heads/{ref}"
    if repo.head_is_detached:
        return "HEAD"
    try:
        return str(repo.lookup_reference("HEAD").target)
    except (KeyError, pygit2.GitError) as exc:
        raise GitFailure(f"cannot resolve HEAD: {exc}") from None


def read_ref(repo: pygit2.Repository, ref: str) -> str | None:
    """The commit sha ``ref`` points at now, or None when it does not resolve."""
    try:
        target = repo.lookup_reference(ref).resolve().target
    except (KeyError, pygit2.GitError, pygit2.InvalidSpecError):
        return None
    return str(target)


class VersionLRU(Generic[V]):
    """A bounded map from sha to version, least recently used evicted first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, sha: str) -> V | None:
        with self._lock:
            value = self._items.get(sha)
            if value is not None:
                self._items.move_to_end(sha)
            return value

    def put(self, sha: str, value: V) -> None:
        with self._lock:
            self._items[sha] = value
            self._items.move_to_end(sha)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, sha: object) -> bool:
        return sha in self._items


@dataclass(frozen=True, slots=True)
class AdvanceReport:
    sha: str
    from_sha: str
    changed: int
    took_ms: float


class GitThread:
    """One worker thread that owns its own repository handle for every heavy git read."""

    def __init__(self, repo_path: Path) -> None:
        self._repo_path = repo_path
        self._repo: pygit2.Repository | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="headd-git")

    def _handle(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = pygit2.Repository(str(self._repo_path))
        return self._repo

    async def run(self, fn: Callable[[pygit2.Repository], V]) -> V:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._handle()))

    def run_blocking(self, fn: Callable[[pygit2.Repository], V]) -> V:
        return self._executor.submit(lambda: fn(self._handle())).result()

    def shutdown(self, *, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=True)


def count_changed_paths(repo: pygit2.Repository, a: str, b: str) -> int:
    """How many paths the trees of two commits differ on (a rename counts both paths)."""
    if a == b:
        return 0
    from headd.head.version import changed_blobs

    return len(changed_blobs(repo, repo[a].peel(pygit2.Tree), repo[b].peel(pygit2.Tree)))


def _cut_parent(version: HeadVersion) -> None:
    """Drop a version's pointer to the one it was built from, so we hold no chain of deltas.

    The head's versions refuse attribute assignment (they are values); the pointer is the one
    slot the daemon may cut, and only on a version it just received and shares with no one yet.
    """
    if version.parent is not None:
        object.__setattr__(version, "parent", None)


class _Offer(NamedTuple):
    parent: str
    sha: str
    indexes: Indexes
    paths: tuple[str, ...]


class RefFollower:
    """The current version at the followed ref's tip, advanced as the ref moves."""

    def __init__(
        self,
        repo_path: Path,
        ref: str,
        git: GitThread,
        *,
        loader: Loader,
        advancer: Advancer,
        history: int = 8,
        clock: Callable[[], float] = time.perf_counter,
        cold_loader: ColdLoader | None = None,
        collector: VersionCollector | None = None,
    ) -> None:
        self.repo_path = repo_path
        self.ref = ref
        self._git = git
        self._load = loader
        self._advance = advancer
        self._cold_load = cold_loader
        #: Freezes the collector's generations after each new version (the daemon passes one;
        #: see ``collector.py``); None leaves the collector alone.
        self._collector = collector
        self._clock = clock
        self._ref_repo_handle: pygit2.Repository | None = None
        self._lock = asyncio.Lock()
        self._history: VersionLRU[HeadVersion] = VersionLRU(history)
        self._loading: dict[str, asyncio.Future[HeadVersion]] = {}
        self._version: HeadVersion | None = None
        self.load_ms: float = 0.0
        #: How the first load was made: ``git``, ``snapshot`` or ``snapshot+advance``.
        self.load_source: str = "git"
        self.advances = 0
        self.last_advance_ms: float | None = None
        self.last_advance_by: str | None = None
        #: Called on the event loop with each new version (the vector fill hooks in here).
        self.on_advance: Callable[[HeadVersion], None] | None = None
        #: A commit's version offered by the session that landed it (``offer``).
        self._offered: _Offer | None = None

    @property
    def version(self) -> HeadVersion:
        """The version at the tip as last read (the first load sets it, before any request)."""
        if self._version is None:
            raise RuntimeError("the follower has not loaded its first version")
        return self._version

    @version.setter
    def version(self, version: HeadVersion) -> None:
        self._version = version

    @property
    def _ref_repo(self) -> pygit2.Repository:
        """The loop's repository for ref reads and resolving, opened at its first use."""
        if self._ref_repo_handle is None:
            self._ref_repo_handle = pygit2.Repository(str(self.repo_path))
        return self._ref_repo_handle

    # -- start ---------------------------------------------------------------------------

    def load_blocking(self) -> HeadVersion:
        """The first load, on the git thread, before the daemon accepts anyone."""
        sha = self.tip()
        if sha is None:
            raise GitFailure(f"ref {self.ref} does not resolve", {"ref": self.ref})
        start = self._clock()
        cold = self._cold_load
        if cold is None:
            self.version = self._git.run_blocking(lambda repo: self._load(repo, sha))
        else:
            started = self._git.run_blocking(lambda repo: cold(repo, sha))
            self.version = started.version
            self.load_source = started.source
        self.load_ms = (self._clock() - start) * 1000.0
        log.info(
            "loaded %s at %s from %s in %.0f ms",
            self.ref,
            sha[:12],
            self.load_source,
            self.load_ms,
        )
        return self.version

    # -- following -----------------------------------------------------------------------

    def tip(self) -> str | None:
        """The commit the followed ref is at now (None when it does not resolve)."""
        return read_ref(self._ref_repo, self.ref)

    async def read_git(self, fn: Callable[[pygit2.Repository], V]) -> V:
        """Run a read of the repository (a blob, the work tree's status) on the git thread,
        which owns the handle, so a read never shares one with an advance."""
        return await self._git.run(fn)

    async def current(self, by: str = "request") -> HeadVersion:
        """The version at the ref's tip as it is now, advancing first if the ref moved."""
        tip = self.tip()
        if tip is None:
            if by != "background":  # the poll would say it fifty times a second
                log.warning("ref %s does not resolve; answering at %s", self.ref, self.version.sha)
            return self.version
        if tip == self.version.sha:
            return self.version
        await self.advance(by)
        return self.version

    async def advance(self, by: str = "request") -> AdvanceReport:
        """Advance to the ref's tip now (a no-op report when already there)."""
        async with self._lock:
            tip = self.tip()
            before = self.version
            if tip is None or tip == before.sha:
                return AdvanceReport(before.sha, before.sha, 0, 0.0)
            start = self._clock()
            adopted = self._adopt(before, tip)
            if adopted is not None:
                new, changed = adopted
            else:
                new, changed = await self._git.run(
                    lambda repo: (
                        self._advance(repo, before, tip),
                        count_changed_paths(repo, before.sha, tip),
                    )
                )
            took = (self._clock() - start) * 1000.0
            _cut_parent(new)
            self._history.put(before.sha, before)
            self.version = new
            self._settled()
            self.advances += 1
            self.last_advance_ms = took
            self.last_advance_by = by
            if self.on_advance is not None:
                self.on_advance(new)
            log.info(
                "advanced %s → %s (%d paths) in %.1f ms", before.sha[:12], tip[:12], changed, took
            )
            return AdvanceReport(tip, before.sha, changed, took)

    def offer(self, parent: str, sha: str, indexes: Indexes, paths: tuple[str, ...]) -> None:
        """Offer commit ``sha``'s version, built by the session that landed it on ``parent``:
        its judged view, when that is exactly what the commit wrote (``commit.as_judged``). The
        next advance from ``parent`` to ``sha`` takes it instead of diffing and parsing again;
        any other advance ignores it. One offer is kept, the latest."""
        self._offered = _Offer(parent, sha, indexes, paths)

    def _adopt(self, before: HeadVersion, tip: str) -> tuple[HeadVersion, int] | None:
        from headd.head.version import HeadVersion

        offered, self._offered = self._offered, None
        if offered is None or offered.sha != tip or offered.parent != before.sha:
            return None
        if before.skipped and {s.path for s in before.skipped} & set(offered.paths):
            return None  # a skipped file rewritten: the advance says what the commit skips
        return HeadVersion(offered.indexes, tip, before, before.skipped), len(offered.paths)

    async def follow_forever(self, interval: float) -> None:
        """The background follower: poll the ref every ``interval`` seconds."""
        last_failure: str | None = None
        while True:
            await asyncio.sleep(interval)
            try:
                await self.current("background")
                last_failure = None
                if self._collector is not None:
                    self._collector.maybe_sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if repr(exc) != last_failure:  # once per distinct failure, not every poll
                    log.exception("background advance failed")
                    last_failure = repr(exc)

    # -- other versions --------------------------------------------------------------------

    def resolve(self, spec: str) -> str:
        from headd.store.git_io import resolve_commit

        return resolve_commit(self._ref_repo, spec)

    async def at(self, spec: str | None) -> HeadVersion:
        """The version named by ``spec`` (any commit), or the current one when None."""
        current = await self.current()
        if spec is None:
            return current
        sha = self.resolve(spec)
        if sha == current.sha:
            return current
        cached = self._history.get(sha)
        if cached is not None:
            return cached
        loading = self._loading.get(sha)
        if loading is None:  # the first asker loads; others asking meanwhile await the same load
            loading = asyncio.ensure_future(self._load_other(current, sha))
            self._loading[sha] = loading
            loading.add_done_callback(lambda _f: self._loading.pop(sha, None))
        return await asyncio.shield(loading)

    async def _load_other(self, current: HeadVersion, sha: str) -> HeadVersion:
        start = self._clock()
        version = await self._git.run(lambda repo: self._advance(repo, current, sha))
        log.info("loaded %s on demand in %.1f ms", sha[:12], (self._clock() - start) * 1000.0)
        _cut_parent(version)
        self._history.put(sha, version)
        self._settled()
        return version

    def version_blocking(self, sha: str) -> HeadVersion:
        """The version at commit ``sha``, for synchronous callers on other threads (sessions).

        Never call this on the git thread itself (it waits for that thread).
        """
        current = self.version
        if sha == current.sha:
            return current
        cached = self._history.get(sha)
        if cached is not None:
            return cached
        version = self._git.run_blocking(lambda repo: self._advance(repo, current, sha))
        _cut_parent(version)
        self._history.put(sha, version)
        self._settled()
        return version

    def _settled(self) -> None:
        if self._collector is not None:
            self._collector.settled()

    async def version_report(self, spec: str) -> tuple[HeadVersion, AdvanceReport]:
        """Load ``spec`` into the LRU and say how it differs from the current version."""
        current = await self.current()
        start = self._clock()
        version = await self.at(spec)
        took = (self._clock() - start) * 1000.0
        changed = await self._git.run(
            lambda repo: count_changed_paths(repo, current.sha, version.sha)
        )
        return version, AdvanceReport(version.sha, current.sha, changed, took)
