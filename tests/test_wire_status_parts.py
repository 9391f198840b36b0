"""No answer of the wire holds an untyped part, and ``status``'s subsystem parts (the embedder's
state, the memory accounting, the remote's standing) encode the bytes their mappings did.

An ``Any`` inside an answer is a shape nobody wrote down: ``docs/protocol.md`` can only call it
"a mapping" and a client reads it with ``.get``. So every answer type (and every Struct of
``headd.wire``, requests included) is walked, through every Struct, union, list and mapping it
nests, and none may end in ``Any`` (``object`` and ``dict[str, Any]`` included). The parts keep their key order, leave out what the mappings left out
(an embedder that is off has no ``load_s``; an unasked ``memory`` only the process's figures; a
plane file that cannot be read no key) and write ``null`` where the mappings did.

Seen red: with ``StatusAnswer.remote`` typed ``dict[str, Any] | None`` again, and with
``EmbedderState.reason`` defaulting to ``None`` instead of ``UNSET`` (an embedder that is on
then writes ``"reason": null``).
"""

from __future__ import annotations

import importlib
import pkgutil
import typing
from pathlib import Path

import msgspec
import msgspec.inspect as mi
from support.stores import make_store

import headd.wire
from headd.embed.factory import embedder_state
from headd.embed.hashing import HashingEmbedder
from headd.wire.answers import answer_types
from headd.wire.remote_answers import Conflict, RemoteError, RemoteStatus
from headd.wire.status_parts import (
    MemoryFigures,
    PlaneFiles,
    PostingsFootprint,
    RecordsFootprint,
    VectorsFootprint,
)

_CONTAINERS = (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)


def untyped_parts(info: mi.Type, where: str, seen: set[type]) -> list[str]:
    """Where ``info`` (an answer's type, walked depth first) ends in ``Any``."""
    if isinstance(info, mi.AnyType) or (isinstance(info, mi.CustomType) and info.cls is object):
        return [where]
    if isinstance(info, mi.StructType):
        if info.cls in seen:
            return []
        seen.add(info.cls)
        return [
            hit
            for field in info.fields
            for hit in untyped_parts(field.type, f"{info.cls.__name__}.{field.name}", seen)
        ]
    if isinstance(info, mi.UnionType):
        return [hit for member in info.types for hit in untyped_parts(member, where, seen)]
    if isinstance(info, _CONTAINERS):
        return untyped_parts(info.item_type, f"{where}[]", seen)
    if isinstance(info, mi.TupleType):
        return [hit for item in info.item_types for hit in untyped_parts(item, f"{where}[]", seen)]
    if isinstance(info, mi.DictType):
        return untyped_parts(info.key_type, f"{where}{{key}}", seen) + untyped_parts(
            info.value_type, f"{where}{{}}", seen
        )
    return []


def test_no_answer_holds_a_part_typed_any() -> None:
    found = {
        method: [
            hit
            for member in typing.get_args(answer) or (answer,)
            for hit in untyped_parts(mi.type_info(member), method, set())
        ]
        for method, answer in answer_types().items()
    }
    assert {method: parts for method, parts in found.items() if parts} == {}


def test_no_struct_of_the_wire_holds_a_part_typed_any() -> None:
    """The requests and every nested Struct too, reached or not from ``answer_types``."""
    found = {}
    for module_info in pkgutil.iter_modules(headd.wire.__path__):
        module = importlib.import_module(f"headd.wire.{module_info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == module.__name__
            ):
                found[f"{module_info.name}.{name}"] = untyped_parts(
                    mi.type_info(value), name, set()
                )
    assert len(found) > 50
    assert {name: parts for name, parts in found.items() if parts} == {}


def test_the_walk_finds_an_untyped_part_where_there_is_one() -> None:
    class Loose(msgspec.Struct):
        fine: dict[str, list[int]]
        rows: list[dict[str, typing.Any]]
        either: int | dict[str, object] | None

    assert untyped_parts(mi.type_info(Loose), "x", set()) == ["Loose.rows[]{}", "Loose.either{}"]


def _json(value: object) -> bytes:
    return msgspec.json.encode(value)


def test_the_embedder_state_writes_the_keys_each_state_wrote() -> None:
    off = embedder_state(None, "off")
    assert _json(off) == _json(
        {"setting": "off", "model": None, "state": "off", "reason": "--embedder off"}
    )
    ready = embedder_state(HashingEmbedder(), "hash")
    assert _json(ready) == _json(
        {"setting": "hash", "model": ready.model, "state": "ready", "load_s": None, "error": None}
    )

    class Failed:
        space, phase, load_seconds, failure_reason = "m", "failed", None, "no weights"

    assert _json(embedder_state(Failed(), "auto")) == _json(
        {"setting": "auto", "model": "m", "state": "failed", "load_s": None, "error": "no weights"}
    )


def test_the_memory_figures_write_only_what_was_asked() -> None:
    assert _json(MemoryFigures(1, None)) == _json({"rss_bytes": 1, "peak_bytes": None})
    pending = MemoryFigures(
        1, 2, records=None, postings=None, vectors=VectorsFootprint(0, 0), plane=PlaneFiles()
    )
    assert _json(pending) == _json(
        {
            "rss_bytes": 1,
            "peak_bytes": 2,
            "records": None,
            "postings": None,
            "vectors": {"entries": 0, "bytes": 0},
            "plane": {},
        }
    )
    built = MemoryFigures(
        1,
        2,
        records=RecordsFootprint(5, 366, 278, 400),
        postings=PostingsFootprint(38, 38, 4000),
        vectors=VectorsFootprint(3, 96),
        plane=PlaneFiles(wal_bytes=7),
    )
    assert _json(built) == _json(
        {
            "rss_bytes": 1,
            "peak_bytes": 2,
            "records": {
                "count": 5,
                "text_chars": 366,
                "body_deflated_bytes": 278,
                "struct_bytes": 400,
            },
            "postings": {"buckets": 38, "entries": 38, "bytes": 4000},
            "vectors": {"entries": 3, "bytes": 96},
            "plane": {"wal_bytes": 7},
        }
    )


def test_the_remote_status_writes_every_key_with_its_nulls() -> None:
    error = RemoteError("not-found", "no such remote", False, "2026-12-01T00:00:00Z")
    conflict = Conflict("c1", "areas/a.html", "o", "t", "refs/headd/conflicts/c1", "now")
    remote = RemoteStatus("origin", None, "origin/main", 0, 2, None, None, error, (conflict,))
    assert _json(remote) == _json(
        {
            "name": "origin",
            "url": None,
            "upstream": "origin/main",
            "ahead": 0,
            "behind": 2,
            "last_fetch_at": None,
            "last_push_at": None,
            "last_error": {
                "kind": "not-found",
                "message": "no such remote",
                "transient": False,
                "at": "2026-12-01T00:00:00Z",
                "commit": None,
                "path": None,
            },
            "conflicts": [
                {
                    "id": "c1",
                    "path": "areas/a.html",
                    "ours": "o",
                    "theirs": "t",
                    "ref": "refs/headd/conflicts/c1",
                    "at": "now",
                }
            ],
            "rescues": 0,
        }
    )


def test_a_daemon_s_status_decodes_into_its_parts(tmp_path: Path) -> None:
    from headd_client import calls
    from headd_client.sync_client import Client
    from support.daemon import short_socket_dir
    from support.inprocess import InProcessDaemon

    store = tmp_path / "store"
    make_store(store)
    socket_path = short_socket_dir() / "s.sock"
    daemon = InProcessDaemon(store, socket_path, embedder="hash").start()
    try:
        with Client(socket_path, timeout=10) as client:
            raw = client.call("status", {"memory": True})
            status = calls.status(memory=True).decode(raw)
    finally:
        daemon.stop()
    assert status.embedder_state.state == "ready" and status.remote is None
    assert isinstance(status.memory.records, RecordsFootprint)
    assert status.memory.records.count == raw["memory"]["records"]["count"] == 5
    assert list(raw["embedder_state"]) == ["setting", "model", "state", "load_s", "error"]
    assert list(raw["memory"])[:4] == ["rss_bytes", "peak_bytes", "records", "postings"]
