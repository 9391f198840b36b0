"""The plane's one dispatcher (``headd_plane.answer``): every plane method answered through one
``match``, reads told from writes by one rule, the same answer from a ``Plane`` (headctl without a
daemon) and from a read-only ``Retrieval`` (the daemon's readers).

Seen red: with ``TracesShow`` left out of ``READS`` (the daemon would queue a read behind the
writer) and with the ``IndexStatus`` case removed (MethodNotFound).
"""

from __future__ import annotations

import typing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from headd_plane.answer import READS, Context, PlaneRequest, answer
from headd_plane.plane import open_plane, open_retrieval
from support.stores import make_store

from headd.wire.filter import Filter
from headd.wire.methods import (
    METHODS,
    IndexStatus,
    IndexUpdate,
    Recall,
    Reinforce,
    Search,
    StateExport,
    TracesIndex,
    TracesSearch,
)

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_the_plane_requests_are_the_wire_s_plane_methods() -> None:
    plane_types = set(typing.get_args(PlaneRequest))
    assert plane_types <= set(METHODS.values())
    assert set(READS) == {
        METHODS["search"],
        METHODS["recall"],
        METHODS["traces.search"],
        METHODS["traces.show"],
    }


def test_every_plane_method_answers_through_one_dispatch(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    context = Context(store, NOW, tmp_path / "no-transcripts")
    plane = open_plane(store)
    try:
        assert answer(IndexUpdate(), plane, context)["added"] == 5
        assert answer(IndexStatus(), plane, context)["indexed"]
        found = answer(Search(query="postgres", plane="index"), plane, context)
        assert found["plane"] == "index" and found["hits"]
        narrowed = Search(query="postgres", plane="index", filter=Filter(types=["procedural"]))
        assert isinstance(answer(narrowed, plane, context)["hits"], list)  # a typed Filter
        top = found["hits"][0]["path"]
        assert answer(Reinforce(paths=[top]), plane, context)["bumped"] == [top]
        assert answer(StateExport(), plane, context)["rows"] == 1
        assert answer(TracesIndex(), plane, context)["trace_root"].endswith("no-transcripts")
        assert answer(Recall(query="postgres"), plane, context)["sha"]
        reader = open_retrieval(store)
        try:
            for read in (Search(query="postgres", plane="index"), TracesSearch(query="")):
                from_reader, from_plane = (
                    answer(read, reader, context),
                    answer(read, plane, context),
                )
                from_reader.pop("took_ms", None), from_plane.pop("took_ms", None)
                assert from_reader == from_plane
            with pytest.raises(TypeError, match="writer"):
                answer(IndexUpdate(), reader, context)
        finally:
            reader.db.close()
    finally:
        plane.close()
