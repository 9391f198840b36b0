"""The default ``VersionSource``: versions of a store's commits, built by the head core.

The daemon passes its own source (the version it follows, with its history); this one serves
``headctl`` and tests. It keeps the last few versions and builds a new one by advancing from the
newest it holds (the head core compares two trees and re-parses only what differs), so judging a
commit after a rebase costs the tree difference, not a full load.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import pygit2

from headd.store import git_io
from headd.store.ports import View


class GitVersions:
    def __init__(self, store: Path, keep: int = 4) -> None:
        self.store = store
        self.keep = keep
        self._cache: OrderedDict[str, View] = OrderedDict()
        self._lock = threading.Lock()
        #: Opened once, used under the lock only (a repository opened per call is a reference
        #: cycle left to the cyclic collector; see ``SessionManager._thread_repos``).
        self._repo: pygit2.Repository | None = None

    def version(self, sha: str) -> View:
        with self._lock:
            cached = self._cache.get(sha)
            if cached is not None:
                self._cache.move_to_end(sha)
                return cached
            from headd.head.version import advance_head, load_head

            if self._repo is None:
                self._repo = git_io.open_repo(self.store)
            repo = self._repo
            if self._cache:
                parent = next(reversed(self._cache.values()))
                view: View = advance_head(repo, parent, sha)  # type: ignore[arg-type]
            else:
                view = load_head(repo, sha)
            self._cache[sha] = view
            while len(self._cache) > self.keep:
                self._cache.popitem(last=False)
            return view
