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

import msgspec
import pytest
from headd_plane.answer import READS, Context, PlaneRequest, answer
from headd_plane.plane import open_plane, open_retrieval
from support.stores import make_store

from headd.wire.answers import (
    IndexRebuildAnswer,
    IndexUpdateAnswer,
    ReinforceAnswer,
    StateExportAnswer,
    StateImportAnswer,
    TracesIndexAnswer,
)
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
from headd.wire.plane_answers import (
    IndexSearchAnswer,
    IndexStatusAnswer,
    RecallAnswer,
    TracesSearchAnswer,
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
        updated = answer(IndexUpdate(), plane, context)
        assert isinstance(updated, IndexUpdateAnswer) and updated.added == 5
        status = answer(IndexStatus(), plane, context)
        assert isinstance(status, IndexStatusAnswer) and status.indexed
        found = answer(Search(query="postgres", plane="index"), plane, context)
        assert isinstance(found, IndexSearchAnswer) and found.plane == "index" and found.hits
        narrowed = Search(query="postgres", plane="index", filter=Filter(types=["procedural"]))
        assert isinstance(answer(narrowed, plane, context), IndexSearchAnswer)  # a typed Filter
        top = found.hits[0].path
        assert answer(Reinforce(paths=[top]), plane, context) == ReinforceAnswer([top], [])
        exported = answer(StateExport(), plane, context)
        assert isinstance(exported, StateExportAnswer) and exported.rows == 1
        scanned = answer(TracesIndex(), plane, context)
        assert isinstance(scanned, TracesIndexAnswer)
        assert scanned.trace_root.endswith("no-transcripts")
        pack = answer(Recall(query="postgres"), plane, context)
        assert isinstance(pack, RecallAnswer) and pack.sha and pack.entries
        assert isinstance(answer(TracesSearch(query=""), plane, context), TracesSearchAnswer)
        reader = open_retrieval(store)
        try:
            for read in (Search(query="postgres", plane="index"), TracesSearch(query="")):
                from_reader, from_plane = (
                    msgspec.to_builtins(answer(read, reader, context)),
                    msgspec.to_builtins(answer(read, plane, context)),
                )
                from_reader.pop("took_ms", None), from_plane.pop("took_ms", None)
                assert from_reader == from_plane
            with pytest.raises(TypeError, match="writer"):
                answer(IndexUpdate(), reader, context)
        finally:
            reader.db.close()
    finally:
        plane.close()


def _fields(struct: type[msgspec.Struct]) -> list[str]:
    return [f.name for f in msgspec.structs.fields(struct)]


def test_the_typed_plane_answers_keep_the_reports_bytes() -> None:
    """A typed answer encodes its fields in declaration order: each is the order the plane's
    reports always had (the rebuild's and update's as their dict form listed them), or the
    wire's bytes would change under every client."""
    from headd_plane.sidecar import ExportReport, ImportReport
    from headd_plane.state import ReinforceResult
    from headd_plane.traces.scan import IndexReport

    assert _fields(IndexRebuildAnswer) == [
        "mode",
        "head_sha",
        "files_indexed",
        "chunks_indexed",
        "edges_indexed",
        "embeddings_written",
        "embeddings_preserved",
        "skipped",
    ]
    assert _fields(IndexUpdateAnswer) == [
        "mode",
        "head_sha",
        "unchanged",
        "added",
        "modified",
        "removed",
        "renamed",
        "dirty",
        "reconciled",
        "embeddings_written",
        "skipped",
    ]
    assert _fields(ReinforceAnswer) == list(ReinforceResult.__annotations__)
    assert _fields(StateExportAnswer) == list(ExportReport.__annotations__)
    assert _fields(StateImportAnswer) == list(ImportReport.__annotations__)
    assert _fields(TracesIndexAnswer) == [*IndexReport.__annotations__, "trace_root"]
