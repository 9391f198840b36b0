"""Rebuild: every row equals memhtml 0.15.1's own index.db; the refusals change nothing."""

from __future__ import annotations

import gc
import json
import sqlite3
from pathlib import Path

import pytest
from headd_plane.indexer import RebuildNoEmbedRefused
from headd_plane.plane import Plane, open_plane
from support.data import ANCHOR, anchor_index, clone_anchor
from support.memory import memory_html
from support.plane import HashEmbedder, rows
from support.stores import Store

from headd.errors import DuplicateContent, EmbedModelMismatch
from headd.record import MemoryRecord

NOW = "2026-11-30T10:00:00.000Z"


@pytest.fixture(scope="module")
def rebuilt_anchor(tmp_path_factory: pytest.TempPathFactory) -> Plane:
    store = clone_anchor(tmp_path_factory.mktemp("rebuild") / "store")
    plane = open_plane(store, now=lambda: NOW)
    plane.rebuild()
    return plane


def test_every_row_equals_the_tools_own_index(rebuilt_anchor: Plane) -> None:
    ours = rows(rebuilt_anchor.db.conn)
    theirs = rows(anchor_index())
    for table in theirs:
        assert ours[table] == theirs[table], table
    assert len(ours["files"]) == 241 and len(ours["chunks"]) == 247 and len(ours["edges"]) == 26


def test_fts_index_matches_the_files_it_covers(rebuilt_anchor: Plane) -> None:
    conn = rebuilt_anchor.db.conn
    conn.execute("INSERT INTO files_fts(files_fts) VALUES ('integrity-check')")
    hits = conn.execute(
        "SELECT count(*) FROM files_fts WHERE files_fts MATCH 'checkout'"
    ).fetchone()[0]
    expected = conn.execute(
        "SELECT count(*) FROM files WHERE lower(fts_text) LIKE '%checkout%'"
    ).fetchone()[0]
    assert hits == expected > 0


def test_a_pooled_parse_staged_in_slices_gives_the_same_rows_and_skips(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    rebuilt_anchor: Plane,
) -> None:
    """The pool (``parallel_parse``) and the staging tables, forced on a small store: the rows,
    the skips and the full-text index are those of the inline rebuild and of memhtml."""
    from headd_plane import bulk_load

    monkeypatch.setattr(bulk_load, "STAGE_EVERY", 50)
    store = clone_anchor(tmp_path / "store")
    plane = open_plane(store, now=lambda: NOW)
    plane.indexer.workers = 2
    report = plane.rebuild()
    assert "parsing inline" not in caplog.text  # the pool did run
    tool = json.loads((ANCHOR / "rebuild-report.json").read_text())["data"]
    assert report.files_indexed == tool["filesIndexed"]
    assert report.chunks_indexed == tool["chunksIndexed"]
    assert sorted(s.path for s in report.skipped) == sorted(s["path"] for s in tool["skipped"])
    assert rows(plane.db.conn) == rows(rebuilt_anchor.db.conn)
    _fts_consistent(plane.db.conn)
    staging = "SELECT count(*) FROM temp.sqlite_master WHERE name LIKE 'headd_stage_%'"
    assert plane.db.conn.execute(staging).fetchone()[0] == 0


def test_state_records_the_commit_and_skips_match_the_tools_report(tmp_path: Path) -> None:
    store = clone_anchor(tmp_path / "store")
    plane = open_plane(store, now=lambda: NOW)
    report = plane.rebuild()
    tool = json.loads((ANCHOR / "rebuild-report.json").read_text())["data"]
    assert report.head_sha == tool["headSha"]
    assert report.files_indexed == tool["filesIndexed"]
    assert report.chunks_indexed == tool["chunksIndexed"]
    assert report.edges_indexed == tool["edgesIndexed"]
    assert sorted(s.path for s in report.skipped) == sorted(s["path"] for s in tool["skipped"])
    status = plane.status()
    assert status.head_sha == tool["headSha"] and not status.stale


def _two_file_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit(
        {
            "areas/a.html": memory_html("A", "Alpha runs the deploy gate.", tags=["x"]),
            "areas/b.html": memory_html("B", "Beta owns the billing ledger."),
        }
    )
    return store


def test_duplicate_content_fails_and_empties_nothing(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    before = rows(plane.db.conn, drop_indexed_at=False)
    state_before = plane.indexer.read_state()
    store.commit({"resources/copy.html": memory_html("Copy", "Alpha runs the deploy gate.")})
    with pytest.raises(DuplicateContent) as caught:
        plane.rebuild()
    pair = {caught.value.details["path"], caught.value.details["existing"]}
    assert pair == {"areas/a.html", "resources/copy.html"}
    assert rows(plane.db.conn, drop_indexed_at=False) == before
    assert plane.indexer.read_state() == state_before
    with pytest.raises(DuplicateContent):
        plane.update()
    assert plane.indexer.read_state() == state_before


def test_two_open_tasks_with_one_body_are_not_duplicates(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    task = memory_html(
        "Review", "Review the deploy runbook.", memory_type="task", task_status="todo"
    )
    store.commit({"projects/ops/t1.html": task, "projects/ops/t2.html": task})
    plane = open_plane(store.root, now=lambda: NOW)
    assert plane.rebuild().files_indexed == 2


def test_rebuild_keeps_vectors_whose_chunk_survives(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    embedder = HashEmbedder()
    plane = open_plane(store.root, embedder=embedder, now=lambda: NOW)
    assert plane.rebuild(embed=True).embeddings_written == 2
    vec_a = plane.db.get(
        "SELECT e.vec FROM embeddings e JOIN chunks c USING (chunk_id) WHERE c.path = 'areas/a.html'"
    )[0]  # type: ignore[index]
    store.commit({"areas/b.html": memory_html("B", "Beta now owns the payments ledger.")})
    calls = embedder.calls
    report = plane.rebuild(embed=True)
    assert report.embeddings_preserved == 1 and report.embeddings_written == 1
    assert embedder.calls == calls + 1
    kept = plane.db.get(
        "SELECT e.vec FROM embeddings e JOIN chunks c USING (chunk_id) WHERE c.path = 'areas/a.html'"
    )[0]  # type: ignore[index]
    assert kept == vec_a
    assert plane.status().vectors.coverage == 1.0


def test_rebuild_without_embedder_over_vectors_is_refused_unless_forced(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    plane = open_plane(store.root, embedder=HashEmbedder(), now=lambda: NOW)
    plane.rebuild(embed=True)
    plane.close()
    lexical = open_plane(store.root, now=lambda: NOW)
    with pytest.raises(RebuildNoEmbedRefused) as caught:
        lexical.rebuild()
    assert caught.value.details["embeddings"] == 2
    report = lexical.rebuild(force=True)
    assert report.embeddings_preserved == 2  # vectors survive a forced lexical rebuild


def test_a_second_vector_space_is_refused(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    open_plane(store.root, embedder=HashEmbedder(dim=32), now=lambda: NOW).rebuild(embed=True)
    other = open_plane(store.root, embedder=HashEmbedder(dim=16), now=lambda: NOW)
    for call in (other.update, other.embed_missing, lambda: other.rebuild(embed=False)):
        with pytest.raises(EmbedModelMismatch):
            call()
    # rebuild --embed migrates the whole space: no vector of the old space survives
    report = other.rebuild(embed=True)
    assert report.embeddings_preserved == 0 and report.embeddings_written == 2
    models = {r[0] for r in other.db.all("SELECT DISTINCT model FROM embeddings")}
    assert models == {"hash-test@16"}
    assert other.status().space == "hash-test@16"


class FlakyEmbedder(HashEmbedder):
    """Fails from its second call on: a model outage in the middle of a backfill."""

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        if self.calls >= 1:
            self.calls += 1
            raise RuntimeError("model down")
        return super().embed_documents(texts)


def test_a_model_outage_keeps_the_slices_that_landed(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    store.commit({"areas/c.html": memory_html("C", "Gamma watches the disk alerts.")})
    plane = open_plane(store.root, embedder=FlakyEmbedder(), now=lambda: NOW)
    plane.indexer.persist_every = 1
    report = plane.rebuild(embed=True)
    assert report.embeddings_written == 1
    gap = plane.backfill(dry_run=True)
    assert (gap.chunks, gap.embeddings, gap.embeddings_remaining) == (3, 1, 2)
    healthy = open_plane(store.root, embedder=HashEmbedder(), now=lambda: NOW)
    done = healthy.backfill()
    assert done.embeddings_written == 2 and done.embeddings_remaining == 0


def _schema(conn: sqlite3.Connection) -> set[tuple[str, str, str | None]]:
    return {(r[0], r[1], r[2]) for r in conn.execute("SELECT type, name, sql FROM sqlite_master")}


def _fts_consistent(conn: sqlite3.Connection) -> None:
    """FTS5's own check of the index against ``files`` (rank 1: compare with the content)."""
    conn.execute("INSERT INTO files_fts(files_fts, rank) VALUES ('integrity-check', 1)")


def _fts_paths(conn: sqlite3.Connection, term: str) -> list[str]:
    return sorted(
        r[0]
        for r in conn.execute(
            "SELECT f.path FROM files_fts JOIN files f ON f.rowid = files_fts.rowid "
            "WHERE files_fts MATCH ?",
            (term,),
        )
    )


def test_a_bulk_rebuild_keeps_the_schema_and_the_full_text_index(tmp_path: Path) -> None:
    store = _two_file_store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    schema = _schema(plane.db.conn)
    plane.rebuild()
    plane.rebuild()  # over a full index: the FTS triggers are set aside and put back
    assert _schema(plane.db.conn) == schema
    _fts_consistent(plane.db.conn)
    assert _fts_paths(plane.db.conn, "billing") == ["areas/b.html"]
    # the triggers are live again: an update keeps the full-text index in step
    store.commit({"areas/b.html": memory_html("B", "Beta owns the payroll ledger.")})
    plane.update()
    _fts_consistent(plane.db.conn)
    assert _fts_paths(plane.db.conn, "billing") == []
    assert _fts_paths(plane.db.conn, "payroll") == ["areas/b.html"]
    # a rebuild refused for a duplicate puts nothing aside for good either
    store.commit({"resources/copy.html": memory_html("Copy", "Alpha runs the deploy gate.")})
    with pytest.raises(DuplicateContent):
        plane.rebuild()
    assert _schema(plane.db.conn) == schema
    _fts_consistent(plane.db.conn)


def _fts_answers(conn: sqlite3.Connection) -> dict[str, list[tuple[str, float]]]:
    """Paths and BM25 scores for a few queries: what a search reads of the full-text index."""
    out: dict[str, list[tuple[str, float]]] = {}
    for query in ("checkout", "deploy OR ledger", "the", "memor*"):
        out[query] = [
            (str(r[0]), round(float(r[1]), 9))
            for r in conn.execute(
                "SELECT f.path, bm25(files_fts) FROM files_fts "
                "JOIN files f ON f.rowid = files_fts.rowid WHERE files_fts MATCH ? "
                "ORDER BY f.path",
                (query,),
            )
        ]
    return out


def test_the_full_text_index_staged_during_the_parse_equals_fts5s_own_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt_anchor: Plane
) -> None:
    """The index tokenized into ``temp`` while the tree is parsed and copied in answers every
    query as FTS5's ``'rebuild'`` does; a schema the copy does not know falls back to it."""
    from headd_plane import bulk_load

    copied: list[bool] = []
    copy = bulk_load._copy_staged_fts

    def spy(conn: sqlite3.Connection, staged: bulk_load.BulkRows) -> bool:
        copied.append(copy(conn, staged))
        return copied[-1]

    monkeypatch.setattr(bulk_load, "_copy_staged_fts", spy)
    monkeypatch.setattr(bulk_load, "STAGE_EVERY", 40)
    store = clone_anchor(tmp_path / "store")
    plane = open_plane(store, now=lambda: NOW)
    schema = _schema(plane.db.conn)
    plane.rebuild()
    expected = _fts_answers(rebuilt_anchor.db.conn)
    assert _fts_answers(plane.db.conn) == expected and expected["checkout"]
    plane.rebuild()  # over a full index, whose FTS5 structure this connection has cached
    assert copied == [True, True]
    assert _schema(plane.db.conn) == schema
    assert plane.db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    _fts_consistent(plane.db.conn)
    assert _fts_answers(plane.db.conn) == expected

    monkeypatch.setattr(bulk_load, "_staged_fts_sql", lambda conn: None)
    plane.rebuild()
    assert copied[-1] is False
    _fts_consistent(plane.db.conn)
    assert _fts_answers(plane.db.conn) == expected


def test_foreign_keys_are_on_again_after_a_rebuild_and_after_a_refused_one(
    tmp_path: Path,
) -> None:
    """The rebuild's transaction runs with foreign keys off; the connection gets them back."""
    store = _two_file_store(tmp_path)
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    plane.rebuild()  # over a full index: the emptying runs without the per-row child probes
    assert plane.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.commit({"resources/copy.html": memory_html("Copy", "Alpha runs the deploy gate.")})
    with pytest.raises(DuplicateContent):
        plane.rebuild()
    assert plane.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert plane.db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert plane.db.conn.execute("PRAGMA integrity_check").fetchall()[0][0] == "ok"


def test_the_bulk_load_holds_no_parsed_record(tmp_path: Path) -> None:
    """The bulk load runs on rows alone: the tree's parsed records, which a refused load would
    replay, are not held through it (parsed again then), so their heap is free before the
    load's own allocations and survivors land among them."""
    held: dict[str, int] = {}

    def alive() -> int:
        gc.collect()
        return sum(isinstance(o, MemoryRecord) for o in gc.get_objects())

    def hook(name: str) -> None:
        if name in ("rebuild.read", "rebuild.truncated"):
            held[name] = alive()

    store = clone_anchor(tmp_path / "store")
    plane = open_plane(store, now=lambda: NOW, hook=hook)
    before = alive()  # records other tests of the same process keep (caches) are not the load's
    report = plane.rebuild()
    assert report.files_indexed == 241
    assert held == {"rebuild.read": before, "rebuild.truncated": before}
