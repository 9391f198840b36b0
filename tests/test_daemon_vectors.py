"""The daemon's vector service: background fill, persistence across restarts, the coverage gate.

The embedder is the deterministic hashing one (the only fake the project allows, and a real
implementation at that); the version is a real one loaded from a real repository.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pygit2
import pytest
from headd_plane.head_vectors import load_cache
from headd_plane.plane import index_path_of
from support.stores import make_store

from headd.daemon.follow import GitThread, RefFollower, resolve_followed_ref
from headd.daemon.handlers import Service
from headd.daemon.vectors import MIN_COVERAGE, VectorService
from headd.embed.hashing import HashingEmbedder
from headd.embed.run_signal import model_call_begins
from headd.head import search
from headd.head.indexes import IndexedView
from headd.head.vectors import VectorSpace, title_text_of, vector_keys_of, vector_text_of
from headd.head.version import advance_head, load_head
from headd.wire.methods import Search


def service(store: Path, embedder: HashingEmbedder) -> VectorService:
    svc = VectorService(store, embedder, ThreadPoolExecutor(1))
    svc.load_blocking()
    return svc


def test_fill_persists_and_a_restart_embeds_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    embedder = HashingEmbedder()

    async def first() -> VectorService:
        svc = service(store, embedder)
        status = svc.status(view)
        assert (status.space, status.entries, status.coverage) == (embedder.space, 0, 0.0)
        assert not (await svc.for_search(view, "postgres", True)).ran, "no vectors yet: degraded"
        svc.schedule_fill(view)
        await svc.wait_idle()
        return svc

    svc = asyncio.run(first())
    assert svc.status(view).entries == 10 and svc.coverage(view) == 1.0  # articles, titles
    assert load_cache(index_path_of(store), VectorSpace.parse(embedder.space)).hashes()
    calls = embedder.calls

    async def restart() -> None:
        again = service(store, embedder)
        assert again.status(view).entries == 10
        again.schedule_fill(view)
        await again.wait_idle()
        assert embedder.calls == calls, "everything was reused from the saved cache"
        arm = await again.for_search(view, "postgres orders", True)
        assert arm.ran and arm.vectors.cache is again.cache
        assert not (await again.for_search(view, "postgres orders", False)).ran

    asyncio.run(restart())


def test_the_arm_waits_for_coverage(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    embedder = HashingEmbedder()
    svc = service(store, embedder)
    from headd.head.vectors import fill_vectors

    partial = fill_vectors(view, svc.cache, embedder, limit=6).cache  # three records' texts
    svc.cache = partial
    assert svc.coverage(view) == 3 / 5 < MIN_COVERAGE
    assert not asyncio.run(svc.for_search(view, "postgres", True)).ran
    svc.cache = fill_vectors(view, partial, embedder).cache
    assert svc.coverage(view) == 1.0
    assert asyncio.run(svc.for_search(view, "postgres", True)).ran


def test_without_an_embedder_nothing_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    svc = VectorService(store, None, ThreadPoolExecutor(1))
    svc.load_blocking()
    status = svc.status(view)
    assert (status.space, status.entries, status.coverage) == (None, 0, 0.0)
    assert not asyncio.run(svc.for_search(view, "x", True)).ran
    assert not (store / ".memhtml").exists()


def test_index_db_keeps_the_embedders_float32_values(tmp_path: Path) -> None:
    """The cache holds half-precision unit rows; index.db the embedder's own float32 answer. Five
    dimensions make the hashing embedder's buckets collide, so its values are not one multiple
    of a common step that a half-precision row rescaled would give back exactly."""
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    embedder = HashingEmbedder(dimension=5)

    async def fill() -> None:
        svc = service(store, embedder)
        svc.schedule_fill(view)
        await svc.wait_idle()

    asyncio.run(fill())
    with sqlite3.connect(index_path_of(store)) as conn:
        stored = dict(conn.execute("SELECT content_hash, vector FROM head_vectors"))
    texts = {}
    for record in view.records():
        keys = vector_keys_of(record)
        texts[keys[0]] = vector_text_of(record)
        if len(keys) > 1:
            texts[keys[1]] = title_text_of(record)
    assert set(stored) == set(texts)
    for key, text in texts.items():
        assert stored[key] == embedder.embed([text])[0].astype("<f4").tobytes()


class HeldEmbedder(HashingEmbedder):
    """The hashing embedder, but a query's embedding waits for ``release`` (a slow model call)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()
        self.hold = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.hold:
            self.entered.set()
            assert self.release.wait(timeout=30)
        return super().embed(texts)


def held_service(tmp_path: Path) -> tuple[IndexedView, HeldEmbedder, VectorService]:
    """A store's version, a held embedder and a service over both (not filled yet)."""
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    embedder = HeldEmbedder()
    return view, embedder, service(store, embedder)


async def filled_then_held(view: IndexedView, embedder: HeldEmbedder, svc: VectorService) -> int:
    """Fill the vectors, then hold every later model call; the calls made so far."""
    svc.schedule_fill(view)
    await svc.wait_idle()
    embedder.hold = True
    return embedder.calls


async def until_entered(embedder: HeldEmbedder) -> None:
    while not embedder.entered.is_set():
        await asyncio.sleep(0.001)


def test_an_embedding_in_flight_blocks_neither_lexical_nor_repeated_queries(
    tmp_path: Path,
) -> None:
    view, embedder, svc = held_service(tmp_path)

    async def run() -> None:
        # one worker thread for the loop's hops: a held model call occupies it whole
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        svc.schedule_fill(view)
        await svc.wait_idle()
        seen = await svc.for_search(view, "postgres orders", True)
        assert seen.ran
        embedder.hold = True
        held = asyncio.ensure_future(svc.for_search(view, "a query new to the daemon", True))
        await until_entered(embedder)
        lexical = await asyncio.wait_for(svc.for_search(view, "anything", False), 2)
        assert not lexical.ran and lexical.coverage == 1.0
        again = await asyncio.wait_for(svc.for_search(view, "postgres orders", True), 2)
        assert again.ran and np.array_equal(again.query_vector, seen.query_vector)
        assert not held.done()
        embedder.release.set()
        assert (await held).ran

    asyncio.run(run())


def test_a_query_asked_again_while_it_embeds_waits_for_the_same_model_call(
    tmp_path: Path,
) -> None:
    view, embedder, svc = held_service(tmp_path)

    async def run() -> None:
        calls = await filled_then_held(view, embedder, svc)
        first = asyncio.ensure_future(svc.for_search(view, "postgres orders", True))
        await until_entered(embedder)
        second = asyncio.ensure_future(svc.for_search(view, "postgres orders", True))
        await asyncio.sleep(0.05)
        embedder.release.set()
        a, b = await first, await second
        assert a.ran and b.ran and np.array_equal(a.query_vector, b.query_vector)
        assert embedder.calls == calls + 1

    asyncio.run(run())


class SignallingEmbedder(HeldEmbedder):
    """The held embedder that, like the local model, says when its model call begins; a held
    call records ``model-done`` once released."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not self.hold:
            return super().embed(texts)
        model_call_begins()
        vectors = super().embed(texts)
        self.order.append("model-done")
        return vectors


def test_begin_answers_once_its_model_call_runs_and_the_search_joins_that_call(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    sha = make_store(store)
    view = load_head(pygit2.Repository(str(store)), sha)
    embedder = SignallingEmbedder()
    svc = service(store, embedder)

    async def run() -> None:
        calls = await filled_then_held(view, embedder, svc)
        assert svc.begin(view, "postgres orders") is not None
        started = svc.begin(view, "postgres orders")  # asked again: the same call's event
        assert started is not None
        assert await asyncio.to_thread(started.wait, 10)
        assert embedder.calls == calls  # inside the model: the vector is not made yet
        embedder.release.set()
        arm = await svc.for_search(view, "postgres orders", True)
        assert arm.ran and embedder.calls == calls + 1
        assert svc.begin(view, "postgres orders") is None  # cached now: no model call

    asyncio.run(run())


def test_an_unseen_query_s_lexical_arm_is_ranked_while_the_model_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    make_store(store)
    git = GitThread(store)
    ref = resolve_followed_ref(pygit2.Repository(str(store)), None)
    follower = RefFollower(store, ref, git, loader=load_head, advancer=advance_head)
    follower.load_blocking()
    embedder = SignallingEmbedder()
    vectors = service(store, embedder)
    daemon = Service(store, follower, vectors=vectors)
    ranked_ahead = search.hybrid_lexical_arm

    def spy(*args: Any, **kwargs: Any) -> search.HybridLexicalArm:
        embedder.order.append("lexical")
        threading.Timer(0.2, embedder.release.set).start()  # then the model finishes
        return ranked_ahead(*args, **kwargs)

    monkeypatch.setattr(search, "hybrid_lexical_arm", spy)

    async def run() -> None:
        view = await follower.current()
        await filled_then_held(view, embedder, vectors)
        # without the overlap the model would finish first: release it late in that case too
        late.start()
        first = await daemon.search(Search(query="postgres orders"))
        assert embedder.order == ["lexical", "model-done"]
        again = await daemon.search(Search(query="postgres orders"))  # its vector cached
        assert embedder.order == ["lexical", "model-done"], "no model call, nothing ranked ahead"
        assert [(h.path, h.score) for h in first.hits] == [(h.path, h.score) for h in again.hits]
        assert first.hits and not first.degraded

    late = threading.Timer(5, embedder.release.set)
    late.daemon = True
    try:
        asyncio.run(run())
    finally:
        late.cancel()
        git.shutdown()
