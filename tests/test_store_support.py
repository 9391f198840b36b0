"""Helpers for the store tests (no tests here): real repositories built with pygit2.

Memory files are rendered by the project's own writer (``headd.memfile.render``), so every file a
test commits is one memhtml would have written.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2

from headd.memfile.render import fields_from_write, render_memory

NOW = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)


class TickingClock:
    """An injected clock: each call one second later than the last."""

    def __init__(self, start: datetime = NOW) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def memory(
    title: str,
    claim: str,
    memory_type: str = "semantic",
    entities: tuple[str, ...] = ("system:headd",),
    body: tuple[str, ...] = (),
) -> str:
    fields = fields_from_write(
        title=title,
        memory_type=memory_type,
        now=NOW,
        claim=claim,
        body=list(body),
        entities=entities,
    )
    return render_memory(fields)


CAPITAL = memory("Capital of India", "The capital of India is New Delhi.")
ALPHA = memory("Alpha", "Alpha is the first letter of the Greek alphabet.")
SEED_FILES = {"areas/inbox/capital.html": CAPITAL, "areas/inbox/alpha.html": ALPHA}

SIGNATURE = pygit2.Signature("Test Author", "test@example.org", 1_764_000_000, 0)


def git(store: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(store), *args], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def make_store(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository on ``main`` with ``files`` committed and checked out."""
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.config["user.name"] = "Store Owner"
    repo.config["user.email"] = "owner@example.org"
    commit_files(root, files if files is not None else SEED_FILES, "seed")
    return root


def commit_files(
    root: Path, files: dict[str, str], message: str = "hand edit", remove: tuple[str, ...] = ()
) -> str:
    """Commit through the shared index and working tree, as a person would."""
    repo = pygit2.Repository(str(root))
    index = repo.index
    index.read()
    for path, html in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(html, encoding="utf-8")
        index.add(path)
    for path in remove:
        (root / path).unlink()
        index.remove(path)
    index.write()
    tree = index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    sha = repo.create_commit("HEAD", SIGNATURE, SIGNATURE, message, tree, parents)
    return str(sha)


def tip(root: Path, ref: str = "refs/heads/main") -> str:
    return str(pygit2.Repository(str(root)).references[ref].target)


def file_at(root: Path, sha: str, path: str) -> str | None:
    repo = pygit2.Repository(str(root))
    tree = repo[sha].peel(pygit2.Tree)
    try:
        return bytes(repo[tree[path].id].read_raw()).decode("utf-8")
    except KeyError:
        return None


def tree_paths(root: Path, sha: str) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", sha).splitlines())
