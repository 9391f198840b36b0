"""No session write ever follows a symbolic link, committed or untracked, nor replaces one.

Each test plants a link with plain git or the file system, points it at a directory outside the
store, and checks that the op is refused with a ``symlink`` violation naming the path and the
link, that nothing appears outside the store, and that the committed link entry is still a link.

Mutation notes (each applied once, the named tests seen red, then reverted):
- ``symlink_on`` returning None -> every test here (the commit lands ``pwn.html`` outside).
- ``symlink_violations`` call in ``commit_session`` removed -> ``…created_after_apply…``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from support.git import git, tip
from support.memory import memory_html
from support.stores import EPOCH, SEED_FILES, WRITTEN, TickingClock, make_store

from headd.errors import GitFailure
from headd.ops import Archive, Put
from headd.store import git_io
from headd.store.manager import SessionManager

PWN = memory_html("Pwn", "This file must never leave the store.", **WRITTEN)
SIGNATURE = pygit2.Signature("Test Author", "test@example.org", EPOCH, 0)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir()
    return target


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_store(root, SEED_FILES, ignore=None)
    return root


def commit_symlink(store: Path, path: str, target: Path) -> str:
    """Commit ``path`` as a symbolic link to ``target`` with plain git."""
    full = store / path
    full.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, full)
    git(store, "add", path)
    git(store, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", f"link {path}")
    return tip(store)


def link_kinds(violations) -> list[tuple[str, str | None, tuple[str, ...]]]:
    return [(v.kind, v.path, v.paths) for v in violations or ()]


def test_a_put_through_a_committed_directory_link_is_refused(store: Path, outside: Path) -> None:
    commit_symlink(store, "resources/linkdir", outside)
    before = tip(store)
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    applied = manager.apply(s, [Put(path="resources/linkdir/pwn.html", html=PWN)])
    assert link_kinds(applied.violations) == [
        ("symlink", "resources/linkdir/pwn.html", ("resources/linkdir",))
    ]
    assert applied.ops == 0
    assert list(outside.iterdir()) == []
    assert tip(store) == before
    entry = pygit2.Repository(str(store))[before].peel(pygit2.Tree)["resources/linkdir"]
    assert entry.filemode == pygit2.enums.FileMode.LINK


def test_an_archive_through_a_committed_archive_link_is_refused(store: Path, outside: Path) -> None:
    commit_symlink(store, "archive", outside)
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    applied = manager.apply(s, [Archive(path="areas/inbox/alpha.html")])
    assert [(v.kind, v.paths) for v in applied.violations] == [("symlink", ("archive",))]
    assert list(outside.iterdir()) == []
    assert (store / "areas/inbox/alpha.html").is_file()


def test_a_link_created_after_apply_is_refused_at_commit(store: Path, outside: Path) -> None:
    """Committed by someone else between apply and commit (the auto rebase moves onto it), or
    left untracked in the work tree: the commit is judged where it writes."""
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    assert manager.apply(s, [Put(path="resources/linkdir/pwn.html", html=PWN)]).violations == ()
    commit_symlink(store, "resources/linkdir", outside)
    moved = tip(store)
    refused = manager.commit(s)
    assert refused.outcome == "refused"
    assert link_kinds(refused.violations) == [
        ("symlink", "resources/linkdir/pwn.html", ("resources/linkdir",))
    ]
    assert list(outside.iterdir()) == [] and tip(store) == moved

    t = manager.open().session
    assert manager.apply(t, [Put(path="areas/loose/pwn.html", html=PWN)]).violations == ()
    os.symlink(outside, store / "areas/loose")  # untracked, never committed
    refused = manager.commit(t)
    assert link_kinds(refused.violations) == [("symlink", "areas/loose/pwn.html", ("areas/loose",))]
    assert list(outside.iterdir()) == [] and tip(store) == moved


def test_a_put_over_a_committed_file_link_is_refused_and_the_link_kept(
    store: Path, outside: Path
) -> None:
    secret = outside / "secret.html"
    secret.write_text("outside\n")
    before = commit_symlink(store, "resources/x.html", secret)
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    applied = manager.apply(s, [Put(path="resources/x.html", html=PWN)])
    assert ("symlink", "resources/x.html", ("resources/x.html",)) in link_kinds(applied.violations)
    assert secret.read_text() == "outside\n"
    assert os.path.islink(store / "resources/x.html") and tip(store) == before


def test_the_tree_writer_never_replaces_a_link_entry(store: Path, outside: Path) -> None:
    """The last line under the judgement: ``write_commit`` refuses instead of turning a link
    entry into a tree, and the work-tree writer refuses a path under an untracked link."""
    base = commit_symlink(store, "resources/linkdir", outside)
    repo = pygit2.Repository(str(store))
    with pytest.raises(GitFailure, match="symbolic link"):
        git_io.write_commit(repo, base, {"resources/linkdir/pwn.html": PWN}, [], "m", SIGNATURE)
    with pytest.raises(GitFailure, match="symbolic link"):
        git_io.write_commit(repo, base, {"resources/linkdir": PWN}, [], "m", SIGNATURE)
    os.symlink(outside, store / "areas/loose")
    blob = str(repo.create_blob(PWN.encode()))
    with pytest.raises(GitFailure, match="areas/loose is a symbolic link"):
        git_io._write_file(repo, "areas/loose/pwn.html", blob)
    with pytest.raises(GitFailure, match="areas/loose is a symbolic link"):
        git_io._write_file(repo, "areas/loose/pwn.html", None)
    assert list(outside.iterdir()) == []
