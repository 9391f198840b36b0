"""Every method answers a Struct of the wire: the description the daemon encodes, the client
decodes into and ``docs/protocol.md`` generates its answer tables from.

A method answering a mapping has a shape nobody wrote down: the page says "a report", the client
reads it with ``.get`` and its fields drift unseen. So every entry of ``answer_types`` is a Struct
(``search``: one of two, by its plane), and every request of the SQLite plane's one dispatcher,
run on a real plane, answers an instance of its method's type, whichever way it is answered
(the unindexed ``traces.show`` included). ``sync``'s Struct, a rebuild's skipped file and an
import's refused line encode the bytes their dicts did.

Seen red: with ``"recall"`` mapped back to a mapping (``dict[str, Any]``) in ``answer_types``, and
with ``headd_plane.calls.traces_show`` answering its unindexed session as a dict.
"""

from __future__ import annotations

import typing
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from headd_plane import calls
from headd_plane.answer import Context, PlaneRequest, answer
from headd_plane.plane import open_plane
from support.stores import make_store
from support.transcripts import S1, sample_tree

from headd.memfile.sidecar import RefusedRow
from headd.wire.answers import IndexUpdateAnswer, SkippedFile, StateImportAnswer, answer_types
from headd.wire.methods import (
    METHODS,
    IndexRebuild,
    IndexStatus,
    IndexUpdate,
    Recall,
    Reinforce,
    Search,
    StateExport,
    StateImport,
    TracesIndex,
    TracesSearch,
    TracesShow,
)
from headd.wire.remote_answers import Conflict, RemoteError, RemoteStatus, RoundReport, SyncAnswer

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
_NAMES = {cls: name for name, cls in METHODS.items()}


def _members(answer_type: object) -> tuple[object, ...]:
    return typing.get_args(answer_type) or (answer_type,)


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_answers_a_struct(method: str) -> None:
    for member in _members(answer_types()[method]):
        assert isinstance(member, type) and issubclass(member, msgspec.Struct), (method, member)


def test_every_plane_request_answers_its_method_s_struct(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    root = sample_tree(tmp_path / "claude")
    context = Context(store, NOW, root)
    plane = open_plane(store)
    try:
        link = calls.WroteLinks("only-links", None, None, "2026-12-01T00:00:00Z", ("areas/a.html",))
        calls.record_wrote(plane.db.conn, link)
        requests: list[PlaneRequest] = [
            IndexRebuild(),
            IndexUpdate(),
            IndexStatus(),
            TracesIndex(),
            Search(query="postgres", plane="index"),
            Recall(query="postgres"),
            TracesSearch(query="the"),
            TracesShow(session=S1),
            TracesShow(session="only-links"),
            Reinforce(paths=["areas/inbox/postgres-is-the-system-of-record.html"]),
            StateExport(),
            StateImport(),
        ]
        assert {type(r) for r in requests} == set(typing.get_args(PlaneRequest))
        for request in requests:
            got = answer(request, plane, context)
            expected = tuple(
                m for m in _members(answer_types()[_NAMES[type(request)]]) if isinstance(m, type)
            )
            assert isinstance(got, expected), (request, type(got))
    finally:
        plane.close()


def test_the_sync_answer_encodes_the_bytes_the_round_always_had() -> None:
    error = RemoteError("network", "unreachable", True, "2026-12-01T00:00:00Z")
    conflict = Conflict("c1", "areas/a.html", "o" * 40, "t" * 40, "refs/headd/conflicts/c1", "now")
    remote = RemoteStatus("origin", None, "origin/main", 1, 0, None, None, error, (conflict,), 2)
    report = RoundReport("failed", "a" * 40, None, 3, new_conflicts=("c1",), error=error)
    builtins = msgspec.to_builtins
    assert msgspec.json.encode(SyncAnswer(round=report, remote=remote)) == msgspec.json.encode(
        {"round": builtins(report), "remote": builtins(remote)}
    )
    assert msgspec.json.encode(SyncAnswer(resolved=(conflict,), remote=None)) == (
        msgspec.json.encode({"resolved": builtins((conflict,)), "remote": None})
    )


def test_a_skipped_file_and_a_refused_line_encode_as_the_rows_they_always_were() -> None:
    skipped = IndexUpdateAnswer(head_sha="a" * 40, unchanged=False, skipped=[SkippedFile("x", "y")])
    assert msgspec.to_builtins(skipped)["skipped"] == [{"path": "x", "reason": "y"}]
    refused = StateImportAnswer("p", 2, 1, 1, True, [RefusedRow(2, None, "not JSON")])
    assert msgspec.to_builtins(refused)["refused"] == [
        {"line": 2, "path": None, "reason": "not JSON"}
    ]
