"""The ref files read without libgit2 (``git_refs``), checked against pygit2 on real repositories.

Each layout git writes is read and compared with what the daemon asked libgit2 before
(``follow.read_ref``, ``follow.resolve_followed_ref``); each layout the files cannot answer for
sure is refused (None from ``RefFiles.at``, or ``Unreadable``), so the follower asks pygit2.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from support.git import external_commit
from support.git import git as run_git
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.follow import followed_ref_of, read_ref, resolve_followed_ref
from headd.daemon.git_refs import RefFiles, Unreadable


def refs_of(store: Path) -> RefFiles:
    refs = RefFiles.at(store)
    assert refs is not None
    return refs


def agrees_with_pygit2(store: Path, *names: str) -> None:
    repo = pygit2.Repository(str(store))
    refs = refs_of(store)
    assert refs.followed_ref() == resolve_followed_ref(repo, None)
    for name in ("HEAD", refs.followed_ref(), *names):
        assert refs.read_ref(name) == read_ref(repo, name), name


def test_loose_refs_and_head_read_as_libgit2_reads_them(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    run_git(store, "branch", "other")
    agrees_with_pygit2(store, "refs/heads/main", "refs/heads/other", "refs/heads/absent")
    assert refs_of(store).read_ref("refs/heads/absent") is None


def test_packed_refs_and_a_loose_ref_newer_than_its_packed_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    run_git(store, "branch", "other")
    run_git(store, "pack-refs", "--all")
    assert not (store / ".git" / "refs" / "heads" / "main").exists()
    agrees_with_pygit2(store, "refs/heads/main", "refs/heads/other")
    tip = external_commit(store, {"areas/inbox/after-pack.html": memory_html("After", "Packed.")})
    assert refs_of(store).read_ref("refs/heads/main") == tip  # the loose ref wins
    agrees_with_pygit2(store, "refs/heads/main", "refs/heads/other")


def test_a_detached_head_and_an_unborn_branch(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    run_git(store, "checkout", "-q", "--detach", sha)
    assert refs_of(store).followed_ref() == "HEAD"
    agrees_with_pygit2(store, "refs/heads/main")
    run_git(store, "checkout", "-q", "--orphan", "fresh")
    assert refs_of(store).followed_ref() == "refs/heads/fresh"
    assert refs_of(store).read_ref("HEAD") is None
    agrees_with_pygit2(store, "refs/heads/main")


def test_a_bare_repository(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    bare = tmp_path / "bare.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(store), str(bare))
    agrees_with_pygit2(bare, "refs/heads/main")


def test_layouts_left_to_pygit2(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    worktree = tmp_path / "linked"
    run_git(store, "worktree", "add", "-q", "-b", "side", str(worktree))
    assert RefFiles.at(worktree) is None  # a .git file
    assert RefFiles.at(tmp_path / "nowhere") is None
    assert RefFiles.at(store / "areas") is None  # libgit2 would search upwards
    repo = pygit2.Repository(str(worktree))
    opened: list[str] = []

    def open_repo() -> pygit2.Repository:
        opened.append("opened")
        return repo

    assert followed_ref_of(worktree, None, open_repo) == "refs/heads/side" and opened
    run_git(store, "config", "extensions.worktreeConfig", "true")
    assert RefFiles.at(store) is None


def test_what_the_files_cannot_say_is_unreadable(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    run_git(store, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    refs = refs_of(store)
    with pytest.raises(Unreadable):
        refs.read_ref("refs/heads/alias")  # a symbolic chain: pygit2 resolves it
    assert read_ref(pygit2.Repository(str(store)), "refs/heads/alias") == sha
    with pytest.raises(Unreadable):
        refs.read_ref("main")  # a short name: pygit2's rules
    (store / ".git" / "refs" / "heads" / "broken").write_text("not an id\n")
    with pytest.raises(Unreadable):
        refs.read_ref("refs/heads/broken")
    (store / ".git" / "HEAD").write_text("ref: ../outside\n")
    with pytest.raises(Unreadable):
        refs.followed_ref()
