"""The SQLite plane tests' tools: row dumps of index.db and the deterministic embedder (the one
fake the tests allow)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence

import numpy as np

#: Row queries compared between two indexes: every column except indexing clocks.
ROW_QUERIES: dict[str, str] = {
    "files": "SELECT * FROM files",
    "file_tags": "SELECT * FROM file_tags",
    "file_entities": "SELECT * FROM file_entities",
    "file_facets": "SELECT * FROM file_facets",
    "file_citations": "SELECT * FROM file_citations",
    "chunks": "SELECT * FROM chunks",
    "edges": "SELECT src_path, rel, dst_path, edge_class, derived, strength, provenance, "
    "sleep_run, src_hash, dst_hash FROM edges",
}


def rows(conn: sqlite3.Connection, drop_indexed_at: bool = True) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for table, sql in ROW_QUERIES.items():
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        data = [tuple(r) for r in cursor.fetchall()]
        if table == "files" and drop_indexed_at:
            at = names.index("indexed_at")
            data = [r[:at] + r[at + 1 :] for r in data]
        out[table] = sorted(data, key=repr)
    return out


def fts_answers(conn: sqlite3.Connection, queries: Sequence[str]) -> dict[str, list[tuple]]:
    """What ``files_fts`` answers each query: ``(path, bm25)`` best first. Paths, not rowids, so
    two indexes built along different histories compare; a stale full-text row shows here."""
    return {
        query: [
            (str(path), round(float(score), 9))
            for path, score in conn.execute(
                "SELECT files.path, bm25(files_fts) AS score FROM files_fts "
                "JOIN files ON files.rowid = files_fts.rowid WHERE files_fts MATCH ? "
                "ORDER BY score, files.path",
                (query,),
            )
        ]
        for query in queries
    }


class HashEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words have near vectors."""

    def __init__(self, dim: int = 32, model: str = "hash-test", fail: bool = False) -> None:
        self.dim = dim
        self.space = f"{model}@{dim}"
        self.fail = fail
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            vec[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("model down")
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> np.ndarray:
        if self.fail:
            raise RuntimeError("model down")
        return self._vector(text)
