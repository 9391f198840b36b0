"""The follower on a real repository: advancing, the ``at`` LRU, one advance per move."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.git import external_commit
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.follow import GitThread, RefFollower, VersionLRU, resolve_followed_ref
from headd.errors import GitFailure
from headd.head.version import advance_head, load_head
from headd.ops import Put


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 9)), max_size=40))
def test_lru_keeps_the_most_recently_used(ops: list[tuple[bool, int]]) -> None:
    lru: VersionLRU[int] = VersionLRU(3)
    model: list[int] = []  # most recent last
    for is_put, key in ops:
        sha = str(key)
        if is_put:
            lru.put(sha, key)
            model = [k for k in model if k != key] + [key]
            model = model[-3:]
        else:
            got = lru.get(sha)
            assert got == (key if key in model else None)
            if key in model:
                model = [k for k in model if k != key] + [key]
    assert len(lru) == len(model)
    assert all(str(k) in lru for k in model)


def make_follower(store: Path) -> tuple[RefFollower, GitThread]:
    import pygit2

    git = GitThread(store)
    ref = resolve_followed_ref(pygit2.Repository(str(store)), None)
    follower = RefFollower(store, ref, git, loader=load_head, advancer=advance_head)
    follower.load_blocking()
    return follower, git


def test_follower_advances_once_and_serves_older_versions(tmp_path: Path) -> None:
    store = tmp_path / "store"
    seed = make_store(store)
    follower, git = make_follower(store)
    try:
        assert follower.ref == "refs/heads/main" and follower.version.sha == seed
        middle = external_commit(store, {"areas/a.html": memory_html("A thing", "A thing holds.")})
        tip = external_commit(store, {"areas/b.html": memory_html("B thing", "B thing holds.")})

        async def scenario() -> None:
            views = await asyncio.gather(*(follower.current() for _ in range(8)))
            assert {v.sha for v in views} == {tip}
            assert follower.advances == 1
            assert follower.version.parent is None, "the delta chain is cut"
            twins = await asyncio.gather(*(follower.at(middle) for _ in range(4)))
            assert twins[0].sha == middle, "never loaded before: built on demand"
            assert all(t is twins[0] for t in twins), "concurrent asks share one load"
            old = await follower.at(seed)
            assert old.sha == seed and old.record("areas/a.html") is None
            assert twins[0].record("areas/a.html") is not None
            assert (await follower.at(seed[:10])) is old, "served from the LRU"
            with pytest.raises(GitFailure):
                await follower.at("no-such-ref")
            version, report = await follower.version_report(seed)
            assert version is old and report.changed == 2 and report.from_sha == tip
            assert follower.version_blocking(seed) is old

        asyncio.run(scenario())
    finally:
        git.shutdown()


def test_followed_ref_resolution(tmp_path: Path) -> None:
    import pygit2

    store = tmp_path / "store"
    make_store(store)
    repo = pygit2.Repository(str(store))
    assert resolve_followed_ref(repo, None) == "refs/heads/main"
    assert resolve_followed_ref(repo, "main") == "refs/heads/main"
    assert resolve_followed_ref(repo, "curate/x") == "refs/heads/curate/x"


def test_an_offered_version_is_taken_only_for_its_own_advance(tmp_path: Path) -> None:
    """A session's offer (its judged view of the commit it landed) replaces the advance from
    its parent to its commit, and nothing else: an offer for another parent or another commit
    is dropped and the follower advances from git."""
    from headd.store.manager import SessionManager
    from headd.store.ports import View

    store = tmp_path / "store"
    seed = make_store(store)
    follower, git = make_follower(store)
    manager = SessionManager(store)

    def landed(path: str, title: str) -> tuple[str, View]:
        s = manager.open().session
        manager.apply(s, [Put(path=path, html=memory_html(title, f"{title} holds."))])
        result = manager.commit(s, title)
        assert result.sha is not None
        view = manager.take_landed(result.sha)
        assert view is not None
        return result.sha, view

    try:
        first, view = landed("areas/a.html", "A thing")

        async def scenario() -> None:
            follower.offer(seed, first, view.indexes, ("areas/a.html",))  # type: ignore[attr-defined]
            assert (await follower.current()).indexes is view.indexes  # type: ignore[attr-defined]
            second, other = landed("areas/b.html", "B thing")
            follower.offer(seed, second, other.indexes, ("areas/b.html",))  # type: ignore[attr-defined]
            advanced = await follower.current()
            assert advanced.sha == second and advanced.indexes is not other.indexes  # type: ignore[attr-defined]
            assert advanced.indexes == other.indexes  # type: ignore[attr-defined]
            assert follower.advances == 2

        asyncio.run(scenario())
    finally:
        git.shutdown()
