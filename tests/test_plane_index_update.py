"""Update by watermark: after any history of commits, an update equals a fresh rebuild.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``GitSource.dirty`` keeping a file that holds HEAD's blob ->
  ``test_a_commit_whose_index_entries_are_owed_is_no_dirty_file``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from headd_plane import indexer as indexer_module
from headd_plane.plane import open_plane
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.memory import memory_html
from support.plane import HashEmbedder, fts_answers, rows
from support.stores import Store

from headd.errors import IndexStale

NOW = "2026-11-30T10:00:00.000Z"
PATHS = [
    "areas/inbox/a.html",
    "areas/inbox/b.html",
    "resources/db/c.html",
    "projects/pay/d.html",
    "archive/2026/areas/inbox/e.html",
]
WORDS = ["deploy", "ledger", "billing", "gate", "region", "pool", "retry", "alert", "disk", "cache"]


def _memory(seed: int, links: bool = True) -> str:
    words = [WORDS[(seed * 7 + i) % len(WORDS)] for i in range(3)]
    link = [("relates_to", "/" + PATHS[seed % len(PATHS)])] if links else []
    return memory_html(
        f"Memory {seed}",
        f"Fact {seed}: {' '.join(words)}.",
        body=f"Details {seed}.",
        tags=[words[0]],
        entities=[f"service:{words[1]}"],
        links=link,
    )


ops = st.lists(
    st.tuples(
        st.sampled_from(["put", "delete", "move", "head-edit"]),
        st.integers(0, len(PATHS) - 1),
        st.integers(0, len(PATHS) - 1),
        st.integers(0, 50),
    ),
    min_size=1,
    max_size=6,
)


def _apply(store: Store, op: tuple[str, int, int, int], seeds: dict[str, int]) -> None:
    kind, i, j, seed = op
    path, other = PATHS[i], PATHS[j]
    present = (store.root / path).exists()
    if kind == "put":
        # one body per seed: never two active files with the same content
        if seed in seeds.values() and seeds.get(path) != seed:
            return
        store.write({path: _memory(seed)})
        seeds[path] = seed
    elif kind == "delete" and present:
        store.write({path: None})
        seeds.pop(path, None)
    elif kind == "move" and present and not (store.root / other).exists():
        store.move(path, other)
        seeds[other] = seeds.pop(path)
    elif kind == "head-edit" and present:
        text = (store.root / path).read_text(encoding="utf-8")
        store.write({path: text.replace("<title>", "<title>Edited ", 1)})


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(history=st.lists(ops, min_size=1, max_size=3))
def test_update_after_any_history_equals_a_fresh_rebuild(
    tmp_path_factory: pytest.TempPathFactory, history: list[list[tuple[str, int, int, int]]]
) -> None:
    root = tmp_path_factory.mktemp("upd")
    store = Store(root / "store", ignore=".memhtml/\n", add_all=True)
    seeds: dict[str, int] = {}
    for n, path in enumerate(PATHS[:3]):
        store.write({path: _memory(n)})
        seeds[path] = n
    store.commit()
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    for commit_ops in history:
        for op in commit_ops:
            _apply(store, op, seeds)
        store.commit()
        plane.update()
    rebuilt = open_plane(_clone(store, root / "fresh"), now=lambda: NOW)
    rebuilt.rebuild()
    assert rows(plane.db.conn) == rows(rebuilt.db.conn)
    queries = [*WORDS, "Edited", "Memory", "Details"]
    assert fts_answers(plane.db.conn, queries) == fts_answers(rebuilt.db.conn, queries)
    assert plane.indexer.read_state()["head_sha"] == store.repo.head.target.__str__()  # type: ignore[index]


def _clone(store: Store, dest: Path) -> Path:
    import pygit2

    pygit2.clone_repository(str(store.root), str(dest))
    return dest


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit({p: _memory(n, links=False) for n, p in enumerate(PATHS[:4])})
    return store


def test_a_rename_moves_the_row_and_keeps_its_vectors(tmp_path: Path) -> None:
    store = _store(tmp_path)
    embedder = HashEmbedder()
    plane = open_plane(store.root, embedder=embedder, now=lambda: NOW)
    plane.rebuild(embed=True)
    before = plane.db.all("SELECT chunk_id, vec FROM embeddings ORDER BY chunk_id")
    calls = embedder.calls
    store.move("areas/inbox/a.html", "archive/2026/areas/inbox/a.html")
    store.commit()
    report = plane.update(embed=True)
    assert (report.renamed, report.added, report.removed) == (1, 0, 0)
    after = plane.db.all("SELECT chunk_id, vec FROM embeddings ORDER BY chunk_id")
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    assert embedder.calls == calls
    row = plane.db.get(
        "SELECT archived, origin_path FROM files WHERE path = 'archive/2026/areas/inbox/a.html'"
    )
    assert tuple(row) == (1, "areas/inbox/a.html")  # type: ignore[arg-type]
    tags = plane.db.get("SELECT count(*) FROM file_tags WHERE path LIKE 'archive/%'")
    assert tags[0] == 1  # type: ignore[index]


def test_dirty_working_tree_is_indexed_after_committed_changes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    store.commit({"areas/inbox/b.html": _memory(20, links=False)})
    store.write({"areas/inbox/b.html": _memory(21, links=False), "resources/db/c.html": None})
    report = plane.update()
    assert report.modified == 1 and report.dirty == 2
    title = plane.db.get("SELECT title FROM files WHERE path = 'areas/inbox/b.html'")
    assert title[0] == "Memory 21"  # type: ignore[index]
    assert plane.db.get("SELECT 1 FROM files WHERE path = 'resources/db/c.html'") is None
    store.commit()
    plane.update()
    rebuilt = open_plane(_clone(store, tmp_path / "fresh"), now=lambda: NOW)
    rebuilt.rebuild()
    assert rows(plane.db.conn) == rows(rebuilt.db.conn)


def test_an_unchanged_tree_reports_unchanged(tmp_path: Path) -> None:
    store = _store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    first = plane.update()  # no index_state row yet: a full rebuild
    assert first.added == 4 and not first.unchanged
    assert plane.update().unchanged


def test_update_refuses_an_unfinished_rebuild(tmp_path: Path) -> None:
    store = _store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    plane.db.run("UPDATE index_state SET head_sha = NULL")
    with pytest.raises(IndexStale):
        plane.update()
    assert plane.status().stale
    plane.rebuild()
    assert plane.update().unchanged


def test_batches_commit_separately_and_the_watermark_moves_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    points: list[str] = []
    plane = open_plane(store.root, now=lambda: NOW, hook=points.append)
    plane.rebuild()
    monkeypatch.setattr(indexer_module, "WRITE_BATCH_SIZE", 10)
    store.commit({p: _memory(30 + n, links=False) for n, p in enumerate(PATHS)})
    points.clear()
    plane.update()
    assert points.count("update.batch") >= 3
    assert points[-1] == "update.recorded"
    assert points.index("update.recorded") > max(
        i for i, p in enumerate(points) if p == "update.batch"
    )


def test_a_reverted_dirty_file_goes_back_to_its_committed_row(tmp_path: Path) -> None:
    store = _store(tmp_path)
    committed = (store.root / "areas/inbox/b.html").read_text(encoding="utf-8")
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    store.write({"areas/inbox/b.html": _memory(40, links=False)})
    assert plane.update().dirty == 1
    store.write({"areas/inbox/b.html": committed})  # reverted: clean again
    report = plane.update()
    assert report.dirty == 0 and report.reconciled == 1 and not report.unchanged
    # and a new process (no memory of the dirty set) finds drift by comparing blobs
    store.write({"areas/inbox/b.html": _memory(41, links=False)})
    plane.update()
    store.write({"areas/inbox/b.html": committed})
    fresh_process = open_plane(store.root, now=lambda: NOW)
    assert fresh_process.update().reconciled == 1
    rebuilt = open_plane(_clone(store, tmp_path / "fresh"), now=lambda: NOW)
    rebuilt.rebuild()
    assert rows(fresh_process.db.conn) == rows(rebuilt.db.conn)


def test_a_body_moving_between_paths_in_one_commit_is_not_a_duplicate(tmp_path: Path) -> None:
    store = _store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    # a.html takes b.html's body while b.html gets a new one: applied in path order, a.html
    # meets b.html's not-yet-updated row in the dedup index
    old_b = (store.root / "areas/inbox/b.html").read_text(encoding="utf-8")
    store.commit({"areas/inbox/a.html": old_b, "areas/inbox/b.html": _memory(50, links=False)})
    plane.update()
    rebuilt = open_plane(_clone(store, tmp_path / "fresh"), now=lambda: NOW)
    rebuilt.rebuild()
    assert rows(plane.db.conn) == rows(rebuilt.db.conn)


def test_a_commit_whose_index_entries_are_owed_is_no_dirty_file(tmp_path: Path) -> None:
    """The daemon's commits leave git's index behind for a moment (``index_later``): status
    then names the new file as staged-deleted and untracked, but the file holds the commit's
    blob, so the update projects it once, from the commit, and counts nothing dirty; a staged
    change undone in the file is no change either."""
    from support.git import git

    from headd.ops import Put
    from headd.store.manager import SessionManager

    store = _store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    manager = SessionManager(store.root)
    session = manager.open().session
    manager.apply(session, [Put(path="areas/inbox/new.html", html=_memory(60, links=False))])
    assert manager.commit(session, "owed", index_later=True).outcome == "committed"
    owed = {path for path, flags in plane.indexer.git.repo.status().items() if flags}
    assert owed == {"areas/inbox/new.html"}  # git's index has not caught up
    projected: list[str] = []
    project = plane.indexer._project

    def counted(path: str, *rest: Any) -> Any:
        projected.append(path)
        return project(path, *rest)

    plane.indexer._project = counted  # type: ignore[method-assign]
    report = plane.update()
    assert (report.added, report.dirty) == (1, 0) and projected == ["areas/inbox/new.html"]
    manager.flush_index()
    # a change staged, then undone in the file: the index differs from HEAD, the file does not
    committed = (store.root / "areas/inbox/b.html").read_text(encoding="utf-8")
    store.write({"areas/inbox/b.html": _memory(61, links=False)})
    git(store.root, "add", "areas/inbox/b.html")
    store.write({"areas/inbox/b.html": committed})
    assert plane.update().dirty == 0
    rebuilt = open_plane(_clone(store, tmp_path / "fresh"), now=lambda: NOW)
    rebuilt.rebuild()
    assert rows(plane.db.conn) == rows(rebuilt.db.conn)
