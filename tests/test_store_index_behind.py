"""git's index written after a commit's answer: the files and the branch move on the answer's path,
the index entries follow in one write (``SessionManager.flush_index``, the next commit, the other
writers of the checkout, or a restart), and ``git status`` in the store is clean after each.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``IndexBehind.recover`` returning at once -> ``test_store_crash.py`` at ``swapped`` and
  ``settled``, and ``test_a_killed_daemon_leaves_the_owed_entries_to_the_restart``.
- the owed entries left out of the commit's dirty check ->
  ``test_the_next_commit_reads_the_owed_entries``.
- no write of the owed entries before a lost race's settlement ->
  ``test_a_lost_race_moves_the_checkout_back_past_owed_entries``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest
from support.git import git, tip
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.ops import Archive, Label, Put
from headd.store.index_behind import FILE
from headd.store.manager import SessionManager

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
GAMMA = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


def staged(store: Path, path: str) -> str | None:
    index = pygit2.Repository(str(store)).index
    return str(index[path].id) if path in index else None


def committed(store: Path, path: str) -> str:
    return git(store, "rev-parse", f"HEAD:{path}")


def test_an_answer_with_the_index_owed_then_the_flush(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    result = manager.commit(s, "later", index_later=True)
    assert result.outcome == "committed" and tip(store) == result.sha
    # The branch and the file are there at the answer; the index entry is owed, and recorded.
    assert (store / "areas/inbox/beta.html").read_text() == BETA
    assert staged(store, "areas/inbox/beta.html") is None
    assert (store / FILE).exists()
    manager.flush_index()
    assert staged(store, "areas/inbox/beta.html") == committed(store, "areas/inbox/beta.html")
    assert not (store / FILE).exists()
    assert git(store, "status", "--porcelain") == ""


def test_the_next_commit_reads_the_owed_entries(store: Path) -> None:
    """A path changed by two commits in a row, the first one's entry still owed: the second
    commit's dirty check reads the owed entry (the first's version), not a local edit, and one
    write brings the index to the second."""
    manager = SessionManager(store, clock=TickingClock())
    first = manager.open().session
    manager.apply(first, [Put(path="areas/inbox/beta.html", html=BETA)])
    assert manager.commit(first, "one", index_later=True).outcome == "committed"
    second = manager.open().session
    manager.apply(second, [Archive(path="areas/inbox/beta.html")])
    result = manager.commit(second, "two", index_later=True)
    assert result.outcome == "committed", result
    assert staged(store, "areas/inbox/beta.html") is None  # still owed: nothing written yet
    manager.flush_index()
    assert git(store, "status", "--porcelain") == ""
    assert staged(store, "areas/inbox/beta.html") is None


def test_an_entry_somebody_staged_meanwhile_is_theirs(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    assert manager.commit(s, "later", index_later=True).outcome == "committed"
    # A person stages their own edit of the path before the flush.
    (store / "areas/inbox/beta.html").write_text(GAMMA)
    git(store, "add", "areas/inbox/beta.html")
    theirs = staged(store, "areas/inbox/beta.html")
    manager.flush_index()
    assert staged(store, "areas/inbox/beta.html") == theirs
    assert (store / "areas/inbox/beta.html").read_text() == GAMMA


def test_the_other_writers_of_the_checkout_find_the_index_written(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    assert manager.commit(s, "later", index_later=True).outcome == "committed"
    with manager.exclusive():
        assert git(store, "status", "--porcelain") == ""


def test_a_lost_race_moves_the_checkout_back_past_owed_entries(store: Path) -> None:
    """The first commit's entry is owed when the second, on the same path, loses its swap to
    another writer: the checkout goes back to the first commit's version, index and file."""
    manager = SessionManager(store, clock=TickingClock())
    first = manager.open().session
    manager.apply(first, [Put(path="areas/inbox/beta.html", html=BETA)])
    assert manager.commit(first, "one", index_later=True).outcome == "committed"
    landed = tip(store)
    second = manager.open().session
    manager.apply(second, [Label(path="areas/inbox/beta.html", entity="topic:greek")])
    repo = pygit2.Repository(str(store))

    def another_writer() -> None:
        head = repo.head.peel(pygit2.Commit)
        who = pygit2.Signature("other", "other@example.org")
        repo.create_commit("refs/heads/main", who, who, "other", head.tree_id, [head.id])

    manager.before_swap = another_writer
    result = manager.commit(second, "two", index_later=True, rebase="never")
    assert result.outcome == "rebase-needed"
    assert tip(store) != landed
    assert (store / "areas/inbox/beta.html").read_text() == BETA
    assert staged(store, "areas/inbox/beta.html") == git(
        store, "rev-parse", f"{landed}:areas/inbox/beta.html"
    )


CHILD = """
import os, signal, sys
from headd.ops import Put
from headd.store.manager import SessionManager
manager = SessionManager(sys.argv[1])
s = manager.open().session
manager.apply(s, [Put(path="areas/inbox/beta.html", html=sys.stdin.read())])
result = manager.commit(s, "then killed", index_later=True)
assert result.outcome == "committed", result
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_daemon_leaves_the_owed_entries_to_the_restart(store: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(store)],
        input=BETA,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert git(store, "status", "--porcelain") != ""
    SessionManager(store, clock=TickingClock())
    assert git(store, "status", "--porcelain") == ""
    assert staged(store, "areas/inbox/beta.html") == committed(store, "areas/inbox/beta.html")
    assert not (store / FILE).exists()
