"""The index recorder: what the write path asks of ``index.db`` and tells it.

- ``record_link`` notes that a memory was written, read, corrected or reinforced inside a
  transcript session (``memory_session_links``), so ``traces_show`` can list a session's memories
  and a memory's sessions can be found. An exact repeat adds nothing: a duplicate note about a
  write must never fail the write.
- ``active_path_for_hash`` is the dedup question, with exactly the predicate of the partial
  unique index ``files_content_hash_active`` (active, not a task), so the write path and the
  database never disagree about what is a duplicate.
- ``active_frames_for`` and ``active_nearest_for`` are batch lookups by signature (a set of frame
  keys, a set of query vectors): one query or one pass over the corpus vectors per call, never one
  per item, because a batch write asking N questions one at a time is quadratic.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

from headd.errors import InvalidParams, StorageFailure
from headd_plane.scope import EXCLUDED_BY_DEFAULT
from headd_plane.state import transaction

LinkKind = Literal["wrote", "read", "corrected", "reinforced"]
LINK_KINDS: tuple[str, ...] = ("wrote", "read", "corrected", "reinforced")


class SessionLink(msgspec.Struct, frozen=True):
    path: str
    session_id: str
    link_kind: str
    at: str
    prompt_id: str | None = None
    turn_uuid: str | None = None


class FrameMatch(msgspec.Struct, frozen=True):
    path: str
    gist: str


class NearMatch(msgspec.Struct, frozen=True):
    path: str
    gist: str
    similarity: float


def record_link(conn: sqlite3.Connection, link: SessionLink) -> bool:
    """Add one link; True when it was new. Idempotent on (path, session, kind, at)."""
    if link.link_kind not in LINK_KINDS:
        raise InvalidParams(
            "link_kind must be one of wrote, read, corrected, reinforced",
            {"link_kind": link.link_kind},
        )
    try:
        with transaction(conn):
            cur = conn.execute(
                """INSERT INTO memory_session_links
                     (path, session_id, prompt_id, turn_uuid, link_kind, at)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT(path, session_id, link_kind, at) DO NOTHING""",
                (
                    link.path,
                    link.session_id,
                    link.prompt_id,
                    link.turn_uuid,
                    link.link_kind,
                    link.at,
                ),
            )
    except sqlite3.Error as exc:
        raise StorageFailure(
            "recording a session link failed", {"operation": "recordLink"}
        ) from exc
    return cur.rowcount == 1


def links_for_path(conn: sqlite3.Connection, path: str) -> list[SessionLink]:
    """Every session a memory was linked to, oldest first."""
    rows = conn.execute(
        """SELECT path, session_id, link_kind, at, prompt_id, turn_uuid
           FROM memory_session_links WHERE path = ? ORDER BY at, session_id, link_kind""",
        (path,),
    ).fetchall()
    return [SessionLink(*r) for r in rows]


def active_path_for_hash(conn: sqlite3.Connection, content_hash: str) -> str | None:
    """The active, non-task memory holding this content hash, if any."""
    row = conn.execute(
        "SELECT path FROM files WHERE content_hash = ? AND archived = 0"
        f" AND memory_type <> '{EXCLUDED_BY_DEFAULT}'",
        (content_hash,),
    ).fetchone()
    return None if row is None else str(row[0])


def active_frames_for(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, list[FrameMatch]]:
    """For each frame key, the live non-task claims on it (path order); absent when none.

    The WHERE clause restates the partial index ``files_frame_key_active`` clause for clause,
    so the planner can use it.
    """
    unique = list(dict.fromkeys(k for k in keys if k))
    if not unique:
        return {}
    marks = ", ".join("?" for _ in unique)
    rows = conn.execute(
        f"""SELECT frame_key, path, gist FROM files
            WHERE frame_key IN ({marks})
              AND archived = 0 AND memory_type <> '{EXCLUDED_BY_DEFAULT}'
              AND frame_key IS NOT NULL
            ORDER BY path""",
        unique,
    ).fetchall()
    out: dict[str, list[FrameMatch]] = {}
    for key, path, gist in rows:
        out.setdefault(key, []).append(FrameMatch(path, gist))
    return out


def active_nearest_for(
    conn: sqlite3.Connection,
    queries: Sequence[Sequence[float] | np.ndarray],
    k: int,
    floor: float,
    exclude_types: Sequence[str] = (),
) -> list[list[NearMatch]]:
    """For each query vector, the active memories whose first-chunk vector is near it.

    Element ``i`` answers ``queries[i]``: at most ``k`` matches with cosine similarity at or
    above ``floor``, best first, ties by path. The corpus vectors are read and normalized once
    for the whole set. A stored vector that does not decode, or has another dimension than the
    query, cannot be compared and is left out.
    """
    if not queries:
        return []
    excluded = list(exclude_types)
    clause = f" AND f.memory_type NOT IN ({', '.join('?' for _ in excluded)})" if excluded else ""
    rows = conn.execute(
        f"""SELECT f.path, f.gist, e.vec FROM files f
            JOIN chunk_spans c ON c.path = f.path AND c.ordinal = 0
            JOIN embeddings e ON e.chunk_id = c.chunk_id
            WHERE f.archived = 0{clause}
            ORDER BY f.path""",
        excluded,
    ).fetchall()
    by_dim: dict[int, tuple[list[str], list[str], list[np.ndarray]]] = {}
    for path, gist, blob in rows:
        if not isinstance(blob, bytes) or not blob or len(blob) % 4:
            continue
        vec = np.frombuffer(blob, dtype="<f4").astype(np.float64)
        norm = float(np.linalg.norm(vec))
        if norm == 0.0 or not np.isfinite(norm):
            continue
        paths, gists, vecs = by_dim.setdefault(vec.size, ([], [], []))
        paths.append(path)
        gists.append(gist)
        vecs.append(vec / norm)
    matrices = {dim: np.vstack(v[2]) for dim, v in by_dim.items()}
    answers: list[list[NearMatch]] = []
    for query in queries:
        q = np.asarray(query, dtype=np.float64)
        qn = float(np.linalg.norm(q))
        if q.size not in matrices or qn == 0.0:
            answers.append([])
            continue
        sims = matrices[q.size] @ (q / qn)
        paths, gists, _ = by_dim[q.size]
        passing = [
            NearMatch(paths[i], gists[i], float(min(1.0, sims[i])))
            for i in np.nonzero(sims >= floor)[0]
        ]
        passing.sort(key=lambda m: (-m.similarity, m.path))
        answers.append(passing[: max(0, k)])
    return answers
