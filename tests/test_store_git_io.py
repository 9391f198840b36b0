"""git_io against real repositories: object writes, the ref compare-and-swap, the checkout."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.git import file_at, git, tip
from support.stores import ALPHA, CAPITAL, NOW, SEED_FILES, Store, make_store

from headd.errors import GitFailure
from headd.store import git_io


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


def test_write_commit_builds_nested_tree_on_parent(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    sha = git_io.write_commit(
        repo,
        base,
        {"projects/x/deep/new.html": "<p>new</p>\n", "areas/inbox/alpha.html": "changed\n"},
        ["areas/inbox/capital.html"],
        "subject\n",
        who,
    )
    commit = repo[sha].peel(pygit2.Commit)
    assert [str(p) for p in commit.parent_ids] == [base]
    assert file_at(store, sha, "projects/x/deep/new.html") == "<p>new</p>\n"
    assert file_at(store, sha, "areas/inbox/alpha.html") == "changed\n"
    assert file_at(store, sha, "areas/inbox/capital.html") is None
    # Nothing moved: the commit is unreachable until a ref is swapped to it.
    assert tip(store) == base
    assert commit.author.name == "Store Owner" and commit.committer.email == "owner@example.org"
    assert commit.author.time == int(NOW.timestamp())


def _index_built_tree(
    repo: pygit2.Repository, parent: str, writes: dict[str, str], removes: list[str]
) -> str:
    """The tree ``write_commit`` built before it edited only the touched directories: the whole
    parent tree read into an in-memory index, edited, written back. The reference to match."""
    index = pygit2.Index()
    index.read_tree(repo[parent].peel(pygit2.Tree))
    for path in removes:
        if path in index:
            index.remove(path)
    for path, html in writes.items():
        blob = repo.create_blob(html.encode("utf-8"))
        index.add(pygit2.IndexEntry(path, blob, git_io.BLOB_MODE))
    return str(index.write_tree(repo))


_SEGMENTS = st.sampled_from(["areas", "projects", "x", "x.html", "a-b", "b.html", "inbox"])
_PATHS = st.lists(_SEGMENTS, min_size=1, max_size=4).map("/".join)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("edits") / "r"), bare=True)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.dictionaries(_PATHS, st.sampled_from(["1", "2", "3"]), max_size=8),
    writes=st.dictionaries(_PATHS, st.sampled_from(["2", "4"]), max_size=4),
    removes=st.lists(_PATHS, max_size=4),
)
def test_write_commit_tree_equals_the_index_built_tree(
    scratch: pygit2.Repository, seed: dict[str, str], writes: dict[str, str], removes: list[str]
) -> None:
    """Property: editing only the touched directories gives the very tree (same id) that the
    whole-index route gave, for any parent, writes and removes, nesting and emptied directories
    included, and for a write through an existing file (the file becomes a directory). A write
    over a directory is left out: the index route dropped that write (now a ``GitFailure``)."""
    if any(p.startswith(w + "/") for w in writes for p in [*seed, *writes]):
        return
    index = pygit2.Index()
    for path, text in seed.items():
        index.add(pygit2.IndexEntry(path, scratch.create_blob(text), git_io.BLOB_MODE))
    who = git_io.signature(scratch, NOW)
    parent = str(scratch.create_commit(None, who, who, "seed", index.write_tree(scratch), []))
    sha = git_io.write_commit(scratch, parent, writes, removes, "edit", who)
    built = str(scratch[sha].peel(pygit2.Commit).tree_id)
    assert built == _index_built_tree(scratch, parent, writes, removes)


def test_write_commit_through_a_file_and_over_a_directory(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    through = git_io.write_commit(
        repo, base, {"areas/inbox/alpha.html/deeper.html": "d"}, [], "m", who
    )
    assert file_at(store, through, "areas/inbox/alpha.html/deeper.html") == "d"
    assert file_at(store, through, "areas/inbox/capital.html") == CAPITAL
    emptied = git_io.write_commit(
        repo, base, {}, ["areas/inbox/alpha.html", "areas/inbox/capital.html"], "m", who
    )
    assert str(repo[emptied].peel(pygit2.Commit).tree_id) == str(repo.TreeBuilder().write())
    with pytest.raises(GitFailure):
        git_io.write_commit(repo, base, {"areas/inbox": "a file over a directory"}, [], "m", who)


def test_signature_falls_back_to_headd_without_identity(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "bare-id"), initial_head="main")
    levels = pygit2.enums.ConfigLevel
    saved = {
        lvl: pygit2.settings.search_path[lvl] for lvl in (levels.GLOBAL, levels.XDG, levels.SYSTEM)
    }
    empty = tmp_path / "no-config"
    empty.mkdir()
    try:
        for lvl in saved:
            pygit2.settings.search_path[lvl] = str(empty)
        fresh = pygit2.Repository(repo.path)
        who = git_io.signature(fresh, NOW)
    finally:
        for lvl, value in saved.items():
            pygit2.settings.search_path[lvl] = value
    assert (who.name, who.email) == ("headd", "headd@localhost")


def test_swap_ref_is_a_real_compare_and_swap(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    mine = git_io.write_commit(repo, base, {"areas/a.html": "a"}, [], "mine", who)
    theirs = git_io.write_commit(repo, base, {"areas/b.html": "b"}, [], "theirs", who)
    # Someone else moves the branch after we read it.
    git(store, "update-ref", "refs/heads/main", theirs, base)
    assert git_io.swap_ref(repo, "refs/heads/main", mine, base, "test") is False
    assert tip(store) == theirs
    assert git_io.swap_ref(repo, "refs/heads/main", mine, theirs, "test") is True
    assert tip(store) == mine


def test_swap_ref_loses_to_a_writer_between_read_and_write(store: Path, monkeypatch) -> None:
    """The old value is checked under git's ref lock, not only before it."""
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    mine = git_io.write_commit(repo, base, {"areas/a.html": "a"}, [], "mine", who)
    theirs = git_io.write_commit(repo, base, {"areas/b.html": "b"}, [], "theirs", who)
    real_lookup = git_io._lookup

    class Racing:
        """The reference as read; someone moves the branch just before we write it."""

        def __init__(self, inner: pygit2.Reference) -> None:
            self.inner = inner
            self.target = inner.target

        def set_target(self, new: str, message: str) -> None:
            git(store, "update-ref", "refs/heads/main", theirs, base)
            self.inner.set_target(new, message)

    def racing_lookup(repo: pygit2.Repository, ref: str) -> Racing | None:
        inner = real_lookup(repo, ref)
        return None if inner is None else Racing(inner)

    monkeypatch.setattr(git_io, "_lookup", racing_lookup)
    assert git_io.swap_ref(repo, "refs/heads/main", mine, base, "test") is False
    assert tip(store) == theirs


def test_swap_ref_creates_a_new_branch_only_when_absent(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    assert git_io.swap_ref(repo, "refs/heads/curate/x", base, None, "new") is True
    assert git_io.swap_ref(repo, "refs/heads/curate/x", base, None, "again") is False


def test_changed_paths_counts_both_sides_of_a_rename(store: Path) -> None:
    base = tip(store)
    git(store, "mv", "areas/inbox/alpha.html", "areas/inbox/alpha-2.html")
    git(store, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-q", "-m", "mv")
    repo = git_io.open_repo(store)
    assert git_io.changed_paths(repo, base, tip(store)) == {
        "areas/inbox/alpha.html",
        "areas/inbox/alpha-2.html",
    }
    assert git_io.changed_paths(repo, base, base) == frozenset()


def test_dirty_paths_sees_modified_staged_deleted_and_untracked(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    (store / "areas/inbox/alpha.html").write_text(ALPHA + "<!-- edit -->\n")
    (store / "areas/inbox/new.html").write_text("untracked")
    (store / "areas/inbox/capital.html").unlink()
    paths = ["areas/inbox/alpha.html", "areas/inbox/new.html", "areas/inbox/capital.html", "x.html"]
    assert git_io.dirty_paths(repo, base, paths) == [
        "areas/inbox/alpha.html",
        "areas/inbox/capital.html",
        "areas/inbox/new.html",
    ]
    git(store, "checkout", "--", "areas/inbox/alpha.html", "areas/inbox/capital.html")
    (store / "areas/inbox/new.html").unlink()
    (store / "areas/inbox/staged.html").write_text("s")
    git(store, "add", "areas/inbox/staged.html")
    (store / "areas/inbox/staged.html").unlink()
    assert git_io.dirty_paths(repo, base, ["areas/inbox/staged.html"]) == [
        "areas/inbox/staged.html"
    ]


def test_move_worktree_forward_and_back_keeps_other_edits(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    new = git_io.write_commit(
        repo, base, {"areas/inbox/beta.html": "beta\n"}, ["areas/inbox/alpha.html"], "m", who
    )
    (store / "areas/inbox/capital.html").write_text(CAPITAL + "<!-- mine -->\n")
    paths = ["areas/inbox/beta.html", "areas/inbox/alpha.html"]
    assert git_io.move_worktree(repo, base, new, paths) == []
    assert (store / "areas/inbox/beta.html").read_text() == "beta\n"
    assert not (store / "areas/inbox/alpha.html").exists()
    git(store, "update-ref", "refs/heads/main", new, base)
    assert git(store, "status", "--porcelain") == "M areas/inbox/capital.html"
    git(store, "update-ref", "refs/heads/main", base, new)
    assert git_io.move_worktree(repo, new, base, paths) == []
    assert (store / "areas/inbox/alpha.html").read_text() == ALPHA
    assert not (store / "areas/inbox/beta.html").exists()
    assert git(store, "status", "--porcelain") == "M areas/inbox/capital.html"


def test_move_worktree_leaves_a_locally_edited_path_alone(store: Path) -> None:
    repo = git_io.open_repo(store)
    base = tip(store)
    who = git_io.signature(repo, NOW)
    new = git_io.write_commit(repo, base, {"areas/inbox/alpha.html": "theirs\n"}, [], "m", who)
    (store / "areas/inbox/alpha.html").write_text("my edit\n")
    assert git_io.move_worktree(repo, base, new, ["areas/inbox/alpha.html"]) == [
        "areas/inbox/alpha.html"
    ]
    assert (store / "areas/inbox/alpha.html").read_text() == "my edit\n"


def test_resolve_and_errors(store: Path) -> None:
    repo = git_io.open_repo(store)
    assert git_io.full_ref(repo, None) == "refs/heads/main"
    assert git_io.full_ref(repo, "main") == "refs/heads/main"
    assert git_io.resolve_ref(repo, "refs/heads/nope") is None
    assert git_io.resolve_commit(repo, "main") == tip(store)
    with pytest.raises(GitFailure):
        git_io.resolve_commit(repo, "no-such-thing")
    with pytest.raises(GitFailure):
        git_io.open_repo(store.parent)
    first = tip(store)
    second = Store.open(store).commit({"areas/inbox/z.html": "z"})
    assert git_io.is_ancestor(repo, first, second) and not git_io.is_ancestor(repo, second, first)


def test_ensure_excluded_once(store: Path) -> None:
    repo = git_io.open_repo(store)
    git_io.ensure_excluded(repo, "/.memhtml/headd/")
    git_io.ensure_excluded(repo, "/.memhtml/headd/")
    text = (Path(repo.path) / "info" / "exclude").read_text()
    assert text.count("/.memhtml/headd/") == 1
    (store / ".memhtml/headd/sessions").mkdir(parents=True)
    (store / ".memhtml/headd/sessions/x.jsonl").write_text("{}\n")
    assert git(store, "status", "--porcelain") == ""


def test_blob_text_reads_a_file_by_its_blob_id_and_refuses_any_other_id(store: Path) -> None:
    """A record's text is read back by its ``blob_sha``: a blob gives its text; a tree's or a
    commit's id, an id not in the store, or a blob that is not UTF-8 is a ``GitFailure``."""
    repo = git_io.open_repo(store)
    commit = repo[tip(store)].peel(pygit2.Commit)
    blob = git_io.blob_at(repo, tip(store), "areas/inbox/alpha.html")
    assert blob is not None
    assert git_io.blob_text(repo, blob) == file_at(store, tip(store), "areas/inbox/alpha.html")
    binary = str(repo.create_blob(b"\xff\xfe not text"))
    for wrong in (str(commit.tree_id), str(commit.id), "0" * 40, binary):
        with pytest.raises(GitFailure) as failure:
            git_io.blob_text(repo, wrong)
        assert failure.value.details == {"blob": wrong}
