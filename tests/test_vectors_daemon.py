"""The vector arm through a real daemon process and its socket, and one small real-model check."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir, wait_for
from support.stores import make_store

from headd.daemon.vectors import PlaneVectorStore


def call(daemon: Daemon, method: str, **params: Any) -> Any:
    with Client(daemon.socket_path, timeout=30) as client:
        return client.call(method, params)


def test_fill_search_and_restart_through_the_socket(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    sock = short_socket_dir() / "head.sock"
    daemon = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
    try:
        assert wait_for(lambda: call(daemon, "status")["vectors"]["coverage"] == 1.0, timeout=20)
        answer = call(daemon, "vectors.fill")
        assert answer == {
            "space": "headd-hash-v1@256",
            "embedded": 0,
            "reused": 5,
            "empty": 0,
            "remaining": 0,
            "coverage": 1.0,
        }
        hybrid = call(daemon, "search", query="postgres orders")
        assert hybrid["degraded"] is False and hybrid["vectors"] == {"coverage": 1.0}
        cached = call(daemon, "search", query="postgres orders")  # its vector from the cache
        assert [(h["path"], h["score"]) for h in cached["hits"]] == [
            (h["path"], h["score"]) for h in hybrid["hits"]
        ]
        # one copy per key (256 float16 and a float32 scale), then the followed version's
        # matrix: 16 rows at least (256 float32, a float64 norm, two flags each)
        held = call(daemon, "status", memory=True)["memory"]["vectors"]
        assert held == {"entries": 10, "bytes": 10 * (256 * 2 + 4) + 16 * (256 * 4 + 8 + 2)}
        lexical = call(daemon, "search", query="postgres orders", vectors=False)
        assert lexical["degraded"] is True and lexical["vectors"] == {"coverage": 1.0}
        fill = call(daemon, "status")["vector_fill"]
        assert fill["filling"] is False and fill["fill_embedded"] == 10  # articles, titles
    finally:
        assert daemon.stop() == 0, daemon.log()

    again = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
    try:

        def settled() -> bool:
            fill = call(again, "status")["vector_fill"]
            return bool(fill["batches"] >= 1 and not fill["filling"])

        assert wait_for(settled, timeout=20)  # the fill after start ran, and found nothing to do
        status = call(again, "status")
        assert status["vectors"] == {"space": "headd-hash-v1@256", "entries": 10, "coverage": 1.0}
        assert status["vector_fill"]["fill_embedded"] == 0, "a restart re-embeds nothing"
        assert call(again, "search", query="postgres orders")["degraded"] is False
    finally:
        assert again.stop() == 0, again.log()


def test_a_daemon_without_an_embedder_refuses_vectors_fill(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock").wait_ready()
    try:
        from headd.errors import ModelUnavailable

        with pytest.raises(ModelUnavailable):
            call(daemon, "vectors.fill", limit=3)
        answer = call(daemon, "search", query="postgres")
        assert answer["degraded"] is True and answer["vectors"] == {"coverage": 0.0}
    finally:
        assert daemon.stop() == 0, daemon.log()


@pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None, reason="the embed extra is not installed"
)
def test_the_real_model_round_trips_through_index_db(tmp_path: Path) -> None:
    from headd.embed.onnx_minilm import MODEL_ID, OnnxEmbedder
    from headd.head.vectors import VectorSpace

    embedder = OnnxEmbedder()
    texts = ["Aspirin lowers fever.", "Postgres is the system of record.", "Cats purr."]
    vectors = embedder.embed(texts)
    space = VectorSpace.parse(embedder.space)
    assert space.id == f"{MODEL_ID}@384" and vectors.shape == (3, 384)
    store = PlaneVectorStore(tmp_path)
    store.append(space, ["a", "b", "c"], vectors)
    store.close()
    cache = PlaneVectorStore(tmp_path).load(space)
    assert len(cache) == 3
    # index.db keeps the model's float32 values; the cache holds each as a half-precision unit row.
    with sqlite3.connect(store.index_path) as conn:
        (blob,) = conn.execute(
            "SELECT vector FROM head_vectors WHERE content_hash = 'b'"
        ).fetchone()
    np.testing.assert_array_equal(np.frombuffer(blob, dtype="<f4"), vectors[1])
    np.testing.assert_allclose(cache.get("b"), vectors[1], atol=2e-4)
    query = embedder.embed(["which database holds the records"])[0]
    scores = cache.cosines(["a", "b", "c"], query)
    assert max(range(3), key=lambda i: scores[i]) == 1


def test_recall_ranks_over_the_head_vectors_one_fill_serves_both(tmp_path: Path) -> None:
    """With the head's cache full and the plane holding no embeddings of its own, recall is not
    degraded and folds the head search's ranking (its first entry is search's first hit)."""
    store = tmp_path / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        assert wait_for(lambda: call(daemon, "status")["vectors"]["coverage"] == 1.0, timeout=20)
        assert wait_for(lambda: call(daemon, "index.status")["indexed"] is True, timeout=20)
        for query in ("connection pool size", "which shards does search run", "release train"):
            search = call(daemon, "search", query=query)
            pack = call(daemon, "recall", query=query)
            assert pack["degraded"] is False and pack["vector_coverage"] == 1.0
            assert not search["degraded"]
            assert pack["entries"][0]["path"] == search["hits"][0]["path"], query
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_search_answers_in_the_mode_asked_for(tmp_path: Path) -> None:
    """``mode: "seed-exact"`` over the socket is memhtml's head search (reciprocal-rank scores,
    at most 2 / 61 with two arms, the in-process seed answer without vectors); the default is
    the hybrid's bounded score fusion; an unknown mode is refused."""
    import pygit2

    from headd.errors import InvalidParams
    from headd.head.search import RRF_K, SEED_EXACT, search_head
    from headd.head.version import load_head

    store = tmp_path / "store"
    seed = make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        assert wait_for(lambda: call(daemon, "status")["vectors"]["coverage"] == 1.0, timeout=20)
        view = load_head(pygit2.Repository(str(store)), seed)
        for query in ("postgres orders", "connection pool size", "release train"):
            seeded = call(daemon, "search", query=query, mode="seed-exact")
            hybrid = call(daemon, "search", query=query)
            assert not seeded["degraded"] and not hybrid["degraded"]
            assert all(0 < hit["score"] <= 2 / (1 + RRF_K) for hit in seeded["hits"]), query
            assert hybrid["hits"][0]["score"] > 2 / (1 + RRF_K), query
            lexical = call(daemon, "search", query=query, mode="seed-exact", vectors=False)
            want = search_head(view, query, now="2100-01-01T00:00:00Z", mode=SEED_EXACT)
            assert [hit["path"] for hit in lexical["hits"]] == [hit.path for hit in want]
        with pytest.raises(InvalidParams):
            call(daemon, "search", query="postgres", mode="exact")
    finally:
        assert daemon.stop() == 0, daemon.log()
