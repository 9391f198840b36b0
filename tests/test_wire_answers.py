"""The answer Structs (``headd.wire.answers``) against the bytes the wire always carried.

The handlers once answered with dict literals; the Structs that replace them must encode to the
same bytes (field order, ``null`` where a dict held None, an optional part left out rather than
``null``), and a client must read every answer back into its type.

Seen red: with ``WireRecord``'s ``archived`` and ``archived_at`` swapped (the record's bytes
differ), and with ``SearchHit.record`` defaulting to None instead of UNSET (a hit without
records grows ``"record":null``).
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.memfile.parse import parse_memory
from headd.record import MemoryRecord
from headd.wire.answers import (
    AdvanceAnswer,
    PathsAnswer,
    ReadAnswer,
    SearchAnswer,
    SearchCoverage,
    SearchHit,
    WireRecord,
    wire_record,
)

#: The record's wire fields, in the order the wire always carried them (the lock this file holds).
WIRE_FIELDS: tuple[str, ...] = (
    "path",
    "blob_sha",
    "content_hash",
    "memory_type",
    "status",
    "title",
    "claim",
    "body_text",
    "tags",
    "entities",
    "links",
    "facets",
    "citations",
    "event_at",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_until",
    "archived",
    "archived_at",
    "superseded_by",
    "frame_key",
    "workspace",
    "para",
    "origin_path",
    "importance",
    "confidence",
    "author",
    "session_id",
    "prompt_id",
    "turn_uuid",
    "task_status",
    "due",
    "warnings",
)


def record_to_wire(record: MemoryRecord) -> dict[str, object]:
    """The record as the handlers once wrote it, field by field: the bytes to keep."""
    out: dict[str, object] = {}
    for name in WIRE_FIELDS:
        value = getattr(record, name)
        if name in ("links", "facets", "citations"):
            value = [msgspec.structs.asdict(v) for v in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=30).map(str.strip).filter(bool)
names = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


def test_the_record_fields_are_the_wire_fields_in_order() -> None:
    assert WireRecord.__struct_fields__ == WIRE_FIELDS


@settings(max_examples=60, deadline=None)
@given(
    title=words,
    claim=words,
    body=st.lists(words, max_size=3),
    tags=st.lists(names, max_size=3, unique=True),
    entities=st.lists(names.map(lambda n: f"tool:{n}"), max_size=3, unique=True),
    links=st.lists(
        st.tuples(
            st.sampled_from(["supersedes", "relates_to"]), names.map(lambda n: f"/a/{n}.html")
        ),
        max_size=2,
        unique_by=lambda link: link[1],
    ),
    facets=st.lists(st.tuples(names, words), max_size=2, unique_by=lambda f: f[0]),
    task=st.booleans(),
)
def test_a_wire_record_encodes_as_the_record_dict_did(
    title: str,
    claim: str,
    body: list[str],
    tags: list[str],
    entities: list[str],
    links: list[tuple[str, str]],
    facets: list[tuple[str, str]],
    task: bool,
) -> None:
    html = memory_html(
        title,
        claim,
        body=body,
        tags=tags,
        entities=entities,
        links=links,
        facets=facets,
        memory_type="task" if task else "semantic",
        task_status="todo" if task else None,
    )
    record = parse_memory("areas/inbox/x.html", html)
    typed = wire_record(record)
    assert msgspec.json.encode(typed) == msgspec.json.encode(record_to_wire(record))
    assert msgspec.json.decode(msgspec.json.encode(typed), type=WireRecord) == typed
    read = ReadAnswer("0" * 40, typed)
    assert msgspec.json.encode(read) == msgspec.json.encode(
        {"sha": "0" * 40, "record": record_to_wire(record)}
    )


def test_a_search_hit_carries_its_record_only_when_asked() -> None:
    hit = SearchHit("a.html", 0.5, "T", "C", ["lexical"])
    answer = SearchAnswer("s", [hit], ["lexical", "recency"], True, SearchCoverage(0.0), 1.5)
    assert msgspec.json.encode(answer) == (
        b'{"sha":"s","hits":[{"path":"a.html","score":0.5,"title":"T","claim":"C",'
        b'"arms":["lexical"]}],"arms":["lexical","recency"],"degraded":true,'
        b'"vectors":{"coverage":0.0},"took_ms":1.5}'
    )
    hit.record = None
    assert b'"arms":["lexical"],"record":null}' in msgspec.json.encode(answer)
    decoded = msgspec.json.decode(msgspec.json.encode(answer), type=SearchAnswer)
    assert decoded.hits[0].record is None


def test_advance_names_its_field_from_on_the_wire() -> None:
    answer = AdvanceAnswer("b", "a", 2, 0.25)
    wire = msgspec.json.encode(answer)
    assert wire == b'{"sha":"b","from":"a","changed":2,"took_ms":0.25}'
    assert msgspec.json.decode(wire, type=AdvanceAnswer) == answer


def test_an_answer_reads_past_fields_a_newer_daemon_adds() -> None:
    wire = b'{"sha":null,"paths":["a.html"],"cursor":"x"}'
    assert msgspec.json.decode(wire, type=PathsAnswer) == PathsAnswer(None, ["a.html"])
