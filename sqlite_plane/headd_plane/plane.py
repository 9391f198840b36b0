"""The SQLite plane's index as one object: what the daemon and ``headctl`` call.

``open_plane(store)`` opens (creating and migrating) ``<store>/.memhtml/headd/index.db`` with
``state.db`` attached beside it, and binds the indexer and retrieval to it. Calls on one plane
are serialised by a lock (one writer connection; SQLite serialises writers across processes).
The clock is read here, at the edge, and passed inward.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headd.wire.answers import IndexRebuildAnswer, IndexUpdateAnswer
from headd.wire.plane_answers import IndexDiskBytes, IndexStatusAnswer

from .coverage import VECTOR_COVERAGE_FLOOR, read_vector_coverage
from .db import PlaneDb, open_reader, open_writer
from .embedding import as_plane_embedder
from .gitsource import GitSource
from .indexer import BackfillReport, Hook, Indexer, Parse
from .paths import PLANE_DIR as PLANE_DIR
from .paths import index_path_of as index_path_of
from .paths import state_path_of as state_path_of
from .recall import RecallPack, recall
from .retrieval import DEFAULT_SEARCH_LIMIT, Retrieval, SearchResult
from .scope import Scope


def iso_now() -> str:
    at = datetime.now(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


class Plane:
    def __init__(
        self,
        store: Path,
        db: PlaneDb,
        indexer: Indexer,
        retrieval: Retrieval,
    ) -> None:
        self.store = store
        self.db = db
        self.indexer = indexer
        self.retrieval = retrieval
        self.lock = threading.RLock()

    @property
    def index_path(self) -> Path:
        return index_path_of(self.store)

    @property
    def state_path(self) -> Path:
        return state_path_of(self.store)

    def rebuild(self, embed: bool = False, force: bool = False) -> IndexRebuildAnswer:
        with self.lock:
            return self.indexer.rebuild(embed=embed, force=force)

    def update(self, embed: bool = False) -> IndexUpdateAnswer:
        with self.lock:
            return self.indexer.update(embed=embed)

    def embed_missing(self) -> int:
        with self.lock:
            return self.indexer.embed_missing()

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        with self.lock:
            return self.indexer.backfill(dry_run=dry_run)

    def search(
        self,
        query: str,
        scope: Scope | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
        now_epoch: float | None = None,
    ) -> SearchResult:
        with self.lock:
            return self.retrieval.search(query, scope, limit, now_epoch)

    def recall(
        self,
        query: str,
        scope: Scope | None = None,
        budget_chars: int | None = None,
        now_epoch: float | None = None,
    ) -> RecallPack:
        with self.lock:
            return recall(self.retrieval, query, scope, budget_chars, now_epoch)

    def status(self) -> IndexStatusAnswer:
        with self.lock:
            state = self.indexer.read_state()
            coverage = read_vector_coverage(self.db, self.retrieval.space)

            def count(table: str) -> int:
                return int(self.db.get(f"SELECT count(*) AS n FROM {table}", op="status")["n"])  # type: ignore[index]

            return IndexStatusAnswer(
                index_path=str(self.index_path),
                state_path=str(self.state_path),
                indexed=state is not None,
                stale=state is not None and state["head_sha"] is None,
                head_sha=None if state is None else state["head_sha"],
                rebuilt_at=None if state is None else state["rebuilt_at"],
                updated_at=None if state is None else state["updated_at"],
                space=None if state is None else state["embed_model"],
                files=count("files"),
                chunks=count("chunk_spans"),
                embeddings=count("embeddings"),
                edges=count("edges"),
                vectors=coverage,
                disk_bytes=self.disk_bytes(),
                migrations_applied=self.db.migrations_applied,
                state_migrations_applied=self.db.state_migrations_applied,
            )

    def disk_bytes(self) -> IndexDiskBytes:
        """The plane's files as they lie on disk (a file not there counts 0)."""
        index, state = self.index_path, self.state_path

        def size(path: Path) -> int:
            try:
                return path.stat().st_size
            except OSError:
                return 0

        return IndexDiskBytes(
            index_db=size(index),
            index_wal=size(Path(f"{index}-wal")),
            state_db=size(state),
            state_wal=size(Path(f"{state}-wal")),
        )

    def close(self) -> None:
        with self.lock:
            self.db.close()


def open_plane(
    store: Path | str,
    embedder: Any = None,
    now: Callable[[], str] = iso_now,
    parse: Parse | None = None,
    coverage_floor: float = VECTOR_COVERAGE_FLOOR,
    hook: Hook | None = None,
) -> Plane:
    root = Path(store)
    db = open_writer(index_path_of(root), state_path_of(root))
    bound = as_plane_embedder(embedder)
    indexer = Indexer(db, GitSource(root), now=now, embedder=bound, parse=parse, hook=hook)
    retrieval = Retrieval(db, embedder=bound, coverage_floor=coverage_floor)
    return Plane(root, db, indexer, retrieval)


def open_retrieval(
    store: Path | str, embedder: Any = None, coverage_floor: float = VECTOR_COVERAGE_FLOOR
) -> Retrieval:
    """A read-only retrieval over an existing index (a second reader beside the one writer)."""
    root = Path(store)
    db = open_reader(index_path_of(root), state_path_of(root))
    return Retrieval(db, embedder=as_plane_embedder(embedder), coverage_floor=coverage_floor)
