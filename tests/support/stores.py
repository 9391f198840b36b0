"""The one store maker: a real git repository with a work tree on ``main``, built with pygit2.

``Store`` writes, deletes and moves work-tree files and commits them through the index. By
default a commit stages only the paths it was given, as ``git add <paths>`` does, so a dirty
work tree stays dirty; ``add_all=True`` stages the whole work tree (``git add -A``), for tests
that edit files first and commit what is there. ``make_store`` is the usual start: a store with
memory files committed, the owner's identity configured and ``.memhtml/`` ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2

from support.memory import memory_html

Changes = Mapping[str, str | bytes | None] | Iterable[tuple[str, str | bytes | None]]

#: The store tests' "now": the clock their files were written at.
NOW = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)
STAMP = "2026-11-30T09:00:00Z"
#: Commit times count from here, one second per commit.
EPOCH = 1_764_000_000


#: What the store tests' memory files carry: written by the writer at ``NOW`` (content hash
#: stamped), about one entity; pass as ``memory_html(title, claim, **WRITTEN)``.
WRITTEN: dict[str, Any] = {"created": STAMP, "entities": ("system:headd",), "content_hash": True}


class TickingClock:
    """An injected clock: each call one second later than the last."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Store:
    """A repository with a work tree at ``root``; each commit one second after the last."""

    def __init__(self, root: Path, *, ignore: str | None = None, add_all: bool = False) -> None:
        self.root = root
        self.repo = pygit2.init_repository(str(root), initial_head="main")
        self.add_all = add_all
        self._tick = 0
        if ignore is not None:
            (root / ".gitignore").write_text(ignore, encoding="utf-8")

    @classmethod
    def open(cls, root: Path, *, add_all: bool = False) -> Store:
        """The store already at ``root``; its commits follow its HEAD's time."""
        store = cls.__new__(cls)
        store.root, store.repo, store.add_all = root, pygit2.Repository(str(root)), add_all
        head = None if store.repo.head_is_unborn else store.repo.head.peel(pygit2.Commit)
        store._tick = 0 if head is None else max(0, head.commit_time - EPOCH)
        return store

    def write(self, changes: Changes) -> list[str]:
        """Write (or delete, for None) work-tree files without committing; the paths touched."""
        items = changes.items() if isinstance(changes, Mapping) else changes
        touched: list[str] = []
        for path, content in items:
            touched.append(path)
            target = self.root / path
            if content is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return touched

    def move(self, source: str, target: str) -> None:
        """Rename a file in the work tree (the next commit records it)."""
        destination = self.root / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        (self.root / source).rename(destination)

    def commit(self, changes: Changes = (), message: str = "commit") -> str:
        """Write ``changes``, stage them (or everything), commit on HEAD; the new sha."""
        touched = self.write(changes)
        index = self.repo.index
        index.read()
        if self.add_all:
            index.clear()  # then add the work tree as it is: deletions and moves included
            index.add_all()
        else:
            for path in touched:
                if (self.root / path).exists():
                    index.add(path)
                elif path in index:
                    index.remove(path)
        index.write()
        tree = index.write_tree()
        self._tick += 1
        signature = pygit2.Signature("Test Author", "test@example.org", EPOCH + self._tick, 0)
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        return str(self.repo.create_commit("HEAD", signature, signature, message, tree, parents))

    def blob_at(self, sha: str, path: str) -> str | None:
        """The blob id of ``path`` at ``sha``, or None."""
        tree = self.repo[sha].peel(pygit2.Tree)
        try:
            return str(tree[path].id)
        except KeyError:
            return None

    def tree_paths(self, sha: str) -> list[str]:
        """Every blob path at a commit, in tree order, read independently of the head's walk."""
        out: list[str] = []

        def walk(tree: pygit2.Tree, prefix: str) -> None:
            for entry in tree:
                if entry.type_str == "tree":
                    walk(entry, f"{prefix}{entry.name}/")  # type: ignore[arg-type]
                else:
                    out.append(f"{prefix}{entry.name}")

        walk(self.repo[sha].peel(pygit2.Tree), "")
        return out


def make_store(
    root: Path, files: Mapping[str, str] | None = None, *, ignore: str | None = "/.memhtml/\n"
) -> str:
    """A store at ``root`` with ``files`` (the daemon tests' corpus by default) and a
    ``.gitignore`` holding ``ignore`` committed, the owner's identity configured; the seed
    commit's sha."""
    store = Store(root)
    store.repo.config["user.name"] = "Store Owner"
    store.repo.config["user.email"] = "owner@example.org"
    seed = dict(BASE_FILES if files is None else files)
    if ignore is not None:
        seed[".gitignore"] = ignore
    return store.commit(seed, "seed")


#: A small corpus: distinct words per file so searches have one clear winner.
BASE_FILES: dict[str, str] = {
    "areas/inbox/postgres-is-the-system-of-record.html": memory_html(
        "Postgres is the system of record",
        "Postgres is the system of record for orders.",
        body="Replicas serve reads only.",
        entities=("service:checkout-api",),
    ),
    "areas/inbox/user-prefers-short-answers.html": memory_html(
        "User prefers short answers",
        "The user prefers short answers with the command first.",
        memory_type="user_preference",
        entities=("person:dana",),
    ),
    "resources/database/connection-pool-size-is-forty.html": memory_html(
        "Connection pool size is forty",
        "The connection pool size is forty per pod.",
        body="Raised from twenty after the November outage.",
        entities=("service:checkout-api",),
        links=(("relates_to", "/areas/inbox/postgres-is-the-system-of-record.html"),),
    ),
    "projects/search-platform/shard-count-is-eight.html": memory_html(
        "Shard count is eight",
        "The search cluster runs eight shards.",
        entities=("project:search-platform",),
    ),
    "areas/inbox/deploys-run-through-the-release-train.html": memory_html(
        "Deploys run through the release train",
        "Deploys run through the weekly release train.",
    ),
    "areas/inbox/broken-memory.html": "<!doctype html><html><head><title>x</title></head>"
    "<body><p>no article here</p></body></html>\n",
}


#: The store tests' seed: two memory files as the writer writes them.
CAPITAL = memory_html("Capital of India", "The capital of India is New Delhi.", **WRITTEN)
ALPHA = memory_html("Alpha", "Alpha is the first letter of the Greek alphabet.", **WRITTEN)
SEED_FILES = {"areas/inbox/capital.html": CAPITAL, "areas/inbox/alpha.html": ALPHA}
