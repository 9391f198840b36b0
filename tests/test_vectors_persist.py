"""The vector cache in the SQLite plane, and the daemon's vector service over it.

Real git stores (``support.stores.make_store``), real ``index.db`` files, real versions; the only
fake is the embedder (the deterministic hashing one, or a wrapper that breaks it on purpose).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import numpy as np
import pygit2
import pytest
from headd_plane.db import open_writer
from headd_plane.head_vectors import append_vectors, load_cache, stored_spaces
from headd_plane.plane import index_path_of
from support.git import external_commit, git
from support.memory import memory_html
from support.stores import make_store

from headd.daemon.vectors import MIN_COVERAGE, VectorService
from headd.embed.hashing import HashingEmbedder
from headd.errors import EmbedModelMismatch, ModelUnavailable
from headd.head.vectors import VectorSpace
from headd.head.version import load_head

SPACE_ID = HashingEmbedder().space


def view_at(store: Path, sha: str | None = None) -> object:
    repo = pygit2.Repository(str(store))
    return load_head(repo, sha or str(repo.head.target))


def service(store: Path, embedder: object) -> VectorService:
    svc = VectorService(store, embedder, ThreadPoolExecutor(1))
    svc.load_blocking()
    return svc


def fill(svc: VectorService, view: object, limit: int | None = None) -> dict[str, object]:
    """The ``vectors.fill`` answer as the wire carries it."""
    answer: dict[str, object] = msgspec.to_builtins(asyncio.run(svc.fill_now(view, limit)))
    return answer


def rows_in(store: Path) -> dict[str, int]:
    conn = sqlite3.connect(index_path_of(store))
    try:
        found = conn.execute("SELECT space, count(*) FROM head_vectors GROUP BY space").fetchall()
    finally:
        conn.close()
    return {str(space): int(n) for space, n in found}


class Broken:
    """The hashing embedder's space, answering wrongly on purpose."""

    def __init__(self, mode: str) -> None:
        self.inner = HashingEmbedder()
        self.mode = mode
        self.calls = 0

    @property
    def space(self) -> str:
        return self.inner.space

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.mode == "raise":
            raise ModelUnavailable("the model fell over", {})
        vectors = self.inner.embed(texts)
        return vectors[:, :17] if self.mode == "width" else vectors


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_store(root)
    return root


def test_vectors_fill_counts_and_a_restart_embeds_nothing(store: Path) -> None:
    view = view_at(store)
    embedder = HashingEmbedder()
    svc = service(store, embedder)
    first = fill(svc, view, limit=4)  # texts: two records' articles and titles
    assert first == {
        "space": SPACE_ID,
        "embedded": 4,
        "reused": 0,
        "empty": 0,
        "remaining": 6,
        "coverage": 0.4,
    }
    second = fill(svc, view)
    assert (second["embedded"], second["reused"], second["remaining"]) == (6, 2, 0)
    assert second["coverage"] == 1.0
    assert rows_in(store) == {SPACE_ID: 10}, "each batch was appended to index.db"
    calls = embedder.calls

    again = service(store, embedder)  # a restart: the cache comes back from index.db
    assert len(again.cache) == 10 and again.coverage(view) == 1.0
    third = fill(again, view)
    assert (third["embedded"], third["reused"], third["remaining"]) == (0, 5, 0)
    assert embedder.calls == calls, "a restart re-embeds nothing"
    arm = asyncio.run(again.for_search(view, "postgres orders", True))
    assert arm.ran and arm.coverage == 1.0


def test_a_move_and_a_head_only_edit_keep_the_vector(store: Path) -> None:
    embedder = HashingEmbedder()
    svc = service(store, embedder)
    fill(svc, view_at(store))
    calls = embedder.calls
    path = "areas/inbox/postgres-is-the-system-of-record.html"
    before = (store / path).read_text(encoding="utf-8")
    git(store, "mv", path, "areas/inbox/moved-orders.html")
    git(store, "commit", "-q", "-m", "move")
    retagged = before.replace("</title>", '</title>\n<meta name="memhtml-tag" content="moved">')
    external_commit(store, {"areas/inbox/moved-orders.html": retagged})
    moved = view_at(store)
    assert "moved" in moved.record("areas/inbox/moved-orders.html").tags  # type: ignore[attr-defined]
    result = fill(svc, moved)
    assert (result["embedded"], result["reused"]) == (0, 5)
    assert embedder.calls == calls and rows_in(store) == {SPACE_ID: 10}
    external_commit(
        store, {"areas/inbox/moved-orders.html": retagged.replace("<title>", "<title>New ")}
    )
    retitled = fill(svc, view_at(store))
    assert (retitled["embedded"], retitled["reused"]) == (1, 4), "the new title alone"
    assert rows_in(store) == {SPACE_ID: 11}


def test_an_article_edit_embeds_that_one_record(store: Path) -> None:
    embedder = HashingEmbedder()
    svc = service(store, embedder)
    fill(svc, view_at(store))
    external_commit(
        store,
        {
            "areas/inbox/postgres-is-the-system-of-record.html": memory_html(
                "Orders", "Orders now live in MySQL."
            )
        },
    )
    result = fill(svc, view_at(store))
    assert (result["embedded"], result["reused"]) == (2, 4), "its article and its new title"
    assert rows_in(store) == {SPACE_ID: 12}, "the old vectors stay (append only)"


def test_another_space_is_never_mixed_and_a_wrong_width_is_refused(store: Path) -> None:
    view = view_at(store)
    fill(service(store, HashingEmbedder()), view)
    other = HashingEmbedder(dimension=64, model_id="other-model")
    svc = service(store, other)
    assert len(svc.cache) == 0, "a different space sees none of the first space's rows"
    fill(svc, view)
    assert rows_in(store) == {SPACE_ID: 10, other.space: 10}
    space = VectorSpace.parse(SPACE_ID)
    db = open_writer(index_path_of(store))
    try:
        with pytest.raises(EmbedModelMismatch) as refused:
            append_vectors(db, space, ["x"], np.zeros((1, 64), dtype=np.float32))
        assert refused.value.code == "ERR_EMBED_MODEL_MISMATCH"
        assert stored_spaces(db) == {SPACE_ID: 10, other.space: 10}, "nothing written"
        db.run(
            "INSERT INTO head_vectors (space, content_hash, vector) VALUES (?, ?, ?)",
            (SPACE_ID, "bad", b"\0" * 12),
        )
    finally:
        db.close()
    with pytest.raises(EmbedModelMismatch):
        load_cache(index_path_of(store), space)


def test_a_failing_embedder_leaves_search_answering_and_stores_nothing(store: Path) -> None:
    view = view_at(store)
    for mode in ("raise", "width"):
        svc = service(store, Broken(mode))

        async def run(svc: VectorService = svc) -> None:
            svc.schedule_fill(view)
            await svc.wait_idle()
            arm = await svc.for_search(view, "postgres", True)
            assert not arm.ran and arm.coverage == 0.0

        asyncio.run(run())
        expected = "ERR_MODEL_UNAVAILABLE" if mode == "raise" else "ERR_EMBED_MODEL_MISMATCH"
        assert svc.fill_status().last_error_code == expected
        with pytest.raises((ModelUnavailable, EmbedModelMismatch)):
            fill(svc, view)
        assert len(svc.cache) == 0
        assert not index_path_of(store).exists() or rows_in(store) == {}


def test_a_query_vector_of_the_wrong_width_degrades_the_search(store: Path) -> None:
    view = view_at(store)
    embedder = Broken("ok")
    svc = service(store, embedder)
    fill(svc, view)
    assert asyncio.run(svc.for_search(view, "postgres", True)).ran
    embedder.mode = "width"
    arm = asyncio.run(svc.for_search(view, "a query never seen", True))
    assert not arm.ran and arm.coverage == 1.0
    embedder.mode = "raise"
    assert not asyncio.run(svc.for_search(view, "another new query", True)).ran


def test_the_arm_waits_for_coverage(store: Path) -> None:
    view = view_at(store)
    svc = service(store, HashingEmbedder())
    fill(svc, view, limit=8)  # four records' articles and titles
    assert svc.coverage(view) == 0.8 < MIN_COVERAGE
    arm = asyncio.run(svc.for_search(view, "postgres", True))
    assert not arm.ran and arm.coverage == 0.8
    fill(svc, view)
    assert asyncio.run(svc.for_search(view, "postgres", True)).ran


def test_a_load_in_chunks_holds_every_row_under_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are converted a chunk at a time (three rows here, seven stored): every key keeps its
    own vector, scaled to length 1, and a zero vector stays zero."""
    import headd_plane.head_vectors as head_vectors

    monkeypatch.setattr(head_vectors, "_LOAD_CHUNK", 3)
    space = VectorSpace.parse("model@4")
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(7, 4)).astype(np.float32) * 3
    vectors[4] = 0.0
    keys = [f"k{i}" for i in range(7)]
    db = open_writer(tmp_path / "index.db")
    try:
        append_vectors(db, space, keys, vectors)
    finally:
        db.close()
    cache = load_cache(tmp_path / "index.db", space)
    assert len(cache) == 7
    for key, vector in zip(keys, vectors, strict=True):
        held = cache.get(key)
        assert held is not None
        norm = float(np.linalg.norm(vector))
        expected = vector / norm if norm else vector
        np.testing.assert_allclose(held, expected, atol=5e-4)
