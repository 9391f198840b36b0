"""The daemon's dirty work tree through inotify: after every kind of change, a watched
``GitSource.dirty`` answers what it answers from libgit2's whole status, and mostly without that
scan; a file holding HEAD's blob is no change in either, whatever git's index says.

Real git repositories, real files, real inotify: the kernel queues an event before the system
call that caused it returns, so each check reads the queue right after the change, no sleeping.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``_status_of_candidates`` without the previously dirty paths -> ``test_a_hand_edit…`` (a file
  still dirty but untouched since drops out).
- ``_watch_tree`` not collecting the files of a new directory -> ``test_a_new_nested_directory…``.
- no candidates from a rewritten index -> ``test_a_change_staged_without_touching_the_file…``.
- no candidates from a moved HEAD -> ``test_head_moving_under_an_unchanged_work_tree…``.
- no candidate limit -> ``test_a_checkout_s_worth_of_changes_is_one_full_scan``.
- git asked about every candidate (none screened by its hash against HEAD's blob) ->
  ``test_commits_that_leave_git_s_index_behind_need_no_scan``.
- no file taken as holding HEAD's blob -> the same, and ``test_a_change_staged_without…``.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import msgspec
import pygit2
import pytest
from headd_plane import dirty_watch
from headd_plane.gitsource import GitSource, StatusEntry
from headd_plane.plane import open_plane
from support.memory import memory_html
from support.plane import rows
from support.stores import Store

NOW = "2026-11-30T10:00:00.000Z"
pytestmark = pytest.mark.skipif(os.uname().sysname != "Linux", reason="inotify is Linux's")


def _memory(seed: int) -> str:
    return memory_html(f"Memory {seed}", f"Fact {seed}.", body=f"Details {seed}.")


def _store(tmp_path: Path, name: str = "store") -> Store:
    store = Store(tmp_path / name, ignore=".memhtml/\n", add_all=True)
    store.commit(
        {
            "areas/inbox/a.html": _memory(1),
            "areas/inbox/b.html": _memory(2),
            "resources/db/c.html": _memory(3),
            "projects/pay/d.html": _memory(4),
        }
    )
    return store


class Watched:
    """A watched GitSource, counting its whole-tree scans."""

    def __init__(self, root: Path) -> None:
        self.git = GitSource(root)
        assert self.git.watch_work_tree()
        self.full_scans = 0
        whole = self.git._status_of_all

        def counted(record: bool) -> dict[str, int]:
            self.full_scans += 1
            return whole(record)

        self.git._status_of_all = counted  # type: ignore[method-assign]
        self.check()  # the first call after the start scans everything
        assert self.full_scans == 1

    def check(self) -> list[StatusEntry]:
        """The watched answer, asserted equal to a fresh whole-tree status."""
        got = self.git.dirty()
        assert self.git.workdir is not None
        assert got == GitSource(self.git.workdir).dirty()
        return got

    def check_fast(self) -> list[StatusEntry]:
        before = self.full_scans
        got = self.check()
        assert self.full_scans == before, "the watch should have answered without a full scan"
        return got


def _paths(entries: list[StatusEntry]) -> dict[str, bool]:
    return {e.path: e.deleted for e in entries}


def test_a_hand_edit_is_dirty_and_stays_dirty_until_reverted(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    committed = (store.root / "areas/inbox/a.html").read_text(encoding="utf-8")
    store.write({"areas/inbox/a.html": _memory(10)})
    assert _paths(watched.check_fast()) == {"areas/inbox/a.html": False}
    assert _paths(watched.check_fast()) == {"areas/inbox/a.html": False}  # untouched, still
    store.write({"areas/inbox/a.html": committed})
    assert watched.check_fast() == []


def test_a_new_file_and_a_deleted_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    store.write({"areas/inbox/new.html": _memory(11), "resources/db/c.html": None})
    assert _paths(watched.check_fast()) == {
        "areas/inbox/new.html": False,
        "resources/db/c.html": True,
    }
    (store.root / "areas/inbox/new.html").unlink()
    assert _paths(watched.check_fast()) == {"resources/db/c.html": True}


def test_a_new_nested_directory_with_files_made_before_its_watch(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    deep = store.root / "areas/new/x/y"
    deep.mkdir(parents=True)  # all made before any watch on them could land
    (deep / "m.html").write_text(_memory(12), encoding="utf-8")
    (store.root / "areas/new/top.html").write_text(_memory(13), encoding="utf-8")
    assert set(_paths(watched.check_fast())) == {"areas/new/x/y/m.html", "areas/new/top.html"}
    (deep / "later.html").write_text(_memory(14), encoding="utf-8")  # now watched
    assert "areas/new/x/y/later.html" in _paths(watched.check_fast())


def test_renames_of_a_file_and_of_a_directory(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    store.move("areas/inbox/a.html", "areas/inbox/renamed.html")
    assert _paths(watched.check_fast()) == {
        "areas/inbox/a.html": True,
        "areas/inbox/renamed.html": False,
    }
    # a directory moved: its watches' paths are stale, so the watch starts over (a full scan)
    (store.root / "areas/inbox").rename(store.root / "areas/outbox")
    before = watched.full_scans
    assert set(_paths(watched.check())) == {
        "areas/inbox/a.html",
        "areas/inbox/b.html",
        "areas/outbox/renamed.html",
        "areas/outbox/b.html",
    }
    assert watched.full_scans == before + 1
    store.write({"areas/outbox/b.html": _memory(15)})  # the new watches follow
    watched.check_fast()


def test_a_deleted_directory_and_one_made_again(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    shutil.rmtree(store.root / "areas/inbox")
    assert set(_paths(watched.check_fast())) == {"areas/inbox/a.html", "areas/inbox/b.html"}
    store.write({"areas/inbox/a.html": (store.root / "projects/pay/d.html").read_text()})
    watched.check_fast()


def test_a_change_staged_without_touching_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    index = store.repo.index
    index.read()
    index.remove("areas/inbox/b.html")  # git rm --cached: the file still holds HEAD's blob
    index.write()
    assert watched.check_fast() == []
    index.add("areas/inbox/b.html")
    index.write()
    assert watched.check_fast() == []
    # an ignored file is nobody's change until it is staged (git add -f): only the index moved
    (store.root / ".memhtml").mkdir(exist_ok=True)
    (store.root / ".memhtml/kept.html").write_text(_memory(15))
    assert watched.check_fast() == []
    index.read()
    index.add(".memhtml/kept.html")
    index.write()
    assert _paths(watched.check_fast()) == {".memhtml/kept.html": False}


def test_commits_that_leave_git_s_index_behind_need_no_scan(tmp_path: Path) -> None:
    """The daemon's commits: each file written in the work tree (a temporary file renamed over
    it), the commit made from trees, git's index written later. Every file holds HEAD's blob,
    so nothing is dirty, and the watch says so without the whole status, however many commits
    came since the last look."""
    store = _store(tmp_path)
    watched = Watched(store.root)
    repo = store.repo
    for n in range(40):
        path = f"areas/burst/m{n:02d}.html"
        text = _memory(700 + n).encode()
        full = store.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        temporary = full.with_name(full.name + ".headd-tmp")
        temporary.write_bytes(text)
        temporary.rename(full)
        parent = repo[repo.head.target].peel(pygit2.Commit)
        index = pygit2.Index()
        index.read_tree(parent.tree)
        index.add(pygit2.IndexEntry(path, repo.create_blob(text), pygit2.GIT_FILEMODE_BLOB))
        tree = index.write_tree(repo)
        sig = pygit2.Signature("t", "t@example.org")
        repo.create_commit("refs/heads/main", sig, sig, f"burst {n}", tree, [parent.id])
    assert watched.check_fast() == []
    # the index written afterwards, as the daemon does: still nothing, still no scan
    index = repo.index
    index.read()
    index.read_tree(repo[repo.head.target].peel(pygit2.Tree))
    index.write()
    assert watched.check_fast() == []


def test_head_moving_under_an_unchanged_work_tree(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.repo.head.target
    store.commit({"areas/inbox/a.html": _memory(16)})
    watched = Watched(store.root)
    store.repo.references["refs/heads/main"].set_target(first)  # git reset --soft HEAD~1
    assert _paths(watched.check_fast()) == {"areas/inbox/a.html": False}


def test_our_own_commit_leaves_nothing_dirty(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    store.commit({"areas/inbox/c2.html": _memory(17), "areas/inbox/a.html": None})
    assert watched.check_fast() == []


def test_ignore_rules_changing_make_the_next_answer_a_full_scan(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    store.write({"areas/scratch/n.html": _memory(18)})
    assert "areas/scratch/n.html" in _paths(watched.check_fast())
    (store.root / ".gitignore").write_text(".memhtml/\nareas/scratch/\n", encoding="utf-8")
    before = watched.full_scans
    assert "areas/scratch/n.html" not in _paths(watched.check())
    assert watched.full_scans == before + 1
    store.write({"areas/scratch/o.html": _memory(19)})  # ignored: never named
    assert "areas/scratch/o.html" not in _paths(watched.check_fast())


def test_an_overflowed_queue_rewatches_and_scans_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    watch = watched.git._watch
    assert watch is not None
    drain = watch._drain

    def overflowing() -> None:
        drain()
        watch._event(-1, dirty_watch.IN_Q_OVERFLOW, "")

    monkeypatch.setattr(watch, "_drain", overflowing)
    store.write({"areas/inbox/a.html": _memory(20)})
    before = watched.full_scans
    watched.check()
    assert watched.full_scans == before + 1
    monkeypatch.setattr(watch, "_drain", drain)
    store.write({"projects/pay/d.html": _memory(21)})
    assert set(_paths(watched.check_fast())) == {"areas/inbox/a.html", "projects/pay/d.html"}


def test_a_watch_limit_leaves_the_full_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)

    def refused(self: dirty_watch.DirtyWatch, path: Path, mask: int, required: bool) -> int:
        raise dirty_watch.WatchUnavailable("inotify_add_watch: no space (max_user_watches)")

    monkeypatch.setattr(dirty_watch.DirtyWatch, "_add", refused)
    (store.root / "areas/more").mkdir()  # its watch is refused: the watch turns itself off
    store.write({"areas/more/m.html": _memory(22)})
    before = watched.full_scans
    assert "areas/more/m.html" in _paths(watched.check())
    store.write({"areas/inbox/a.html": _memory(23)})
    assert "areas/inbox/a.html" in _paths(watched.check())
    assert watched.full_scans == before + 2
    assert watched.git._watch is not None and not watched.git._watch.active
    # and a watch that cannot start at all is no watch
    assert not GitSource(store.root).watch_work_tree()


def test_a_nested_repository_turns_the_watch_off(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    pygit2.init_repository(str(store.root / "areas/vendored"))
    before = watched.full_scans
    watched.check()
    assert watched.full_scans == before + 1
    assert watched.git._watch is not None and not watched.git._watch.active


def _random_step(store: Store, rng: random.Random, step: int) -> None:
    files = sorted(
        str(p.relative_to(store.root))
        for p in store.root.rglob("*.html")
        if ".git" not in p.parts and ".memhtml" not in p.parts
    )
    kind = rng.choice(["edit", "new", "delete", "move", "nested", "stage", "commit", "reset"])
    if kind == "edit" and files:
        store.write({rng.choice(files): _memory(100 + step)})
    elif kind == "new":
        store.write({f"areas/inbox/n{step}.html": _memory(200 + step)})
    elif kind == "delete" and files:
        (store.root / rng.choice(files)).unlink()
    elif kind == "move" and files:
        store.move(rng.choice(files), f"resources/db/m{step}.html")
    elif kind == "nested":
        store.write({f"projects/p{step}/q/r.html": _memory(300 + step)})
    elif kind == "stage" and files:
        index = store.repo.index
        index.read()
        index.add(rng.choice(files))
        index.write()
    elif kind == "commit":
        store.commit(message=f"step {step}")
    elif kind == "reset" and not store.repo.head_is_unborn:
        parents = store.repo[store.repo.head.target].peel(pygit2.Commit).parents
        if parents:
            store.repo.references["refs/heads/main"].set_target(parents[0].id)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_histories_answer_as_the_whole_status(tmp_path: Path, seed: int) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    rng = random.Random(seed)
    for step in range(25):
        _random_step(store, rng, step)
        watched.check_fast()


def test_a_watched_plane_updates_exactly_as_a_scanning_one(tmp_path: Path) -> None:
    """The daemon's plane (watched) and ``headctl``'s (scanning) over the same histories."""
    stores = [_store(tmp_path, "watched"), _store(tmp_path, "scanning")]
    planes = [open_plane(s.root, now=lambda: NOW) for s in stores]
    assert planes[0].indexer.git.watch_work_tree()
    for plane in planes:
        plane.rebuild()
    rngs = [random.Random(7), random.Random(7)]
    try:
        for step in range(20):
            for store, rng in zip(stores, rngs, strict=True):
                _random_step(store, rng, step)
            reports = [msgspec.to_builtins(plane.update()) for plane in planes]
            assert reports[0] == reports[1]
            assert rows(planes[0].db.conn) == rows(planes[1].db.conn)
    finally:
        planes[0].indexer.git.unwatch_work_tree()
        for plane in planes:
            plane.close()


def test_a_checkout_s_worth_of_changes_is_one_full_scan(tmp_path: Path) -> None:
    store = _store(tmp_path)
    watched = Watched(store.root)
    store.write({f"areas/bulk/f{n:03d}.html": _memory(400 + n) for n in range(40)})
    before = watched.full_scans
    assert len(watched.check()) == 40
    assert watched.full_scans == before + 1
    store.write({"areas/bulk/f000.html": _memory(500)})
    # the 40 new files are still dirty, so each answer is the whole scan until they settle
    watched.check()
    store.commit()
    assert watched.check() == []  # 40 paths moved in HEAD: a scan again
    store.write({"areas/bulk/f001.html": _memory(501)})
    assert watched.check_fast() == [StatusEntry("areas/bulk/f001.html", False)]
