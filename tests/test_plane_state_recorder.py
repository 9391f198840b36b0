"""The index recorder: session links, the dedup lookup, frame-key and nearest-vector batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from headd_plane.db import PlaneDb, open_writer
from headd_plane.recorder import (
    FrameMatch,
    SessionLink,
    active_frames_for,
    active_nearest_for,
    active_path_for_hash,
    links_for_path,
    record_link,
)

from headd.errors import InvalidParams


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    yield db
    db.close()


def add_file(
    db: PlaneDb,
    path: str,
    content_hash: str,
    memory_type: str = "semantic",
    archived: int = 0,
    frame_key: str | None = None,
    vec: list[float] | None = None,
) -> None:
    para = path.split("/")[0]
    db.conn.execute(
        """INSERT INTO files (path, blob_sha, content_hash, memory_type, title, body_text, gist,
             para, archived, created_at, updated_at, indexed_at, frame_key)
           VALUES (?, 'b', ?, ?, 't', 'body', ?, ?, ?, 'c', 'u', 'i', ?)""",
        (path, content_hash, memory_type, f"gist of {path}", para, archived, frame_key),
    )
    if vec is not None:
        chunk = f"chunk-{path}"
        db.conn.execute(
            "INSERT INTO chunk_spans (chunk_id, path, content_hash, ordinal, start,"
            " span_length, char_count) VALUES (?, ?, ?, 0, 0, 4, 4)",
            (chunk, path, content_hash),
        )
        db.conn.execute(
            "INSERT INTO embeddings (chunk_id, model, dim, vec, created_at)"
            " VALUES (?, 'hash@3', ?, ?, 'c')",
            (chunk, len(vec), np.asarray(vec, dtype="<f4").tobytes()),
        )


def test_a_link_is_recorded_once(plane: PlaneDb) -> None:
    link = SessionLink("areas/a.html", "s-1", "wrote", "2026-08-01T00:00:00.000Z", "P", "u1")
    assert record_link(plane.conn, link) is True
    assert record_link(plane.conn, link) is False  # an exact repeat adds nothing
    later = SessionLink("areas/a.html", "s-1", "read", "2026-08-01T00:01:00.000Z")
    assert record_link(plane.conn, later) is True
    assert links_for_path(plane.conn, "areas/a.html") == [link, later]
    with pytest.raises(InvalidParams):
        record_link(plane.conn, SessionLink("a.html", "s", "liked", "2026-08-01T00:00:00Z"))


def test_the_dedup_lookup_mirrors_the_unique_index(plane: PlaneDb) -> None:
    add_file(plane, "areas/live.html", "h1")
    add_file(plane, "archive/2026/old.html", "h2", archived=1)
    add_file(plane, "projects/todo.html", "h3", memory_type="task")
    assert active_path_for_hash(plane.conn, "h1") == "areas/live.html"
    assert active_path_for_hash(plane.conn, "h2") is None  # archived
    assert active_path_for_hash(plane.conn, "h3") is None  # a task is never a dedup home
    assert active_path_for_hash(plane.conn, "nope") is None


def test_frames_answer_a_whole_key_set(plane: PlaneDb) -> None:
    add_file(plane, "areas/b.html", "h1", frame_key="k1")
    add_file(plane, "areas/a.html", "h2", frame_key="k1")
    add_file(plane, "areas/c.html", "h3", frame_key="k2")
    add_file(plane, "archive/2026/d.html", "h4", frame_key="k2", archived=1)
    add_file(plane, "projects/t.html", "h5", frame_key="k3", memory_type="task")
    found = active_frames_for(plane.conn, ["k1", "k2", "k3", "k9", "", "k1"])
    assert found == {
        "k1": [
            FrameMatch("areas/a.html", "gist of areas/a.html"),
            FrameMatch("areas/b.html", "gist of areas/b.html"),
        ],
        "k2": [FrameMatch("areas/c.html", "gist of areas/c.html")],
    }
    assert active_frames_for(plane.conn, []) == {}


def test_nearest_is_positional_floored_and_best_first(plane: PlaneDb) -> None:
    add_file(plane, "areas/x.html", "h1", vec=[1.0, 0.0, 0.0])
    add_file(plane, "areas/y.html", "h2", vec=[0.8, 0.6, 0.0])
    add_file(plane, "areas/z.html", "h3", vec=[0.0, 1.0, 0.0])
    add_file(plane, "areas/arc.html", "h4", memory_type="arc", vec=[1.0, 0.0, 0.0])
    add_file(plane, "archive/2026/w.html", "h5", archived=1, vec=[1.0, 0.0, 0.0])
    answers = active_nearest_for(
        plane.conn,
        [[2.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0]],
        k=2,
        floor=0.7,
        exclude_types=["arc"],
    )
    assert [(m.path, round(m.similarity, 6)) for m in answers[0]] == [
        ("areas/x.html", 1.0),
        ("areas/y.html", 0.8),
    ]
    assert answers[1] == []  # nothing at or above the floor
    assert answers[2] == []  # another dimension cannot be compared
    assert answers[0][0].gist == "gist of areas/x.html"
    with_arcs = active_nearest_for(plane.conn, [[1.0, 0.0, 0.0]], k=5, floor=0.99)
    assert [m.path for m in with_arcs[0]] == ["areas/arc.html", "areas/x.html"]  # ties by path
    assert active_nearest_for(plane.conn, [], k=3, floor=0.0) == []
