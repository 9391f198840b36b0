"""Scope: seed 000's scope semantics as a predicate, and through search_head."""

from __future__ import annotations

import msgspec
import pytest
from support.head_corpus import MapView
from support.memory import memory_html

from headd.errors import InvalidParams
from headd.head.scope import Scope, parse_facet_filter, parse_facet_filters
from headd.head.search import search_head
from headd.head.version import parse_record
from headd.record import EntityRow, Facet, MemoryRecord
from headd.wire.filter import Filter
from headd.wire.methods import decode_request


def rec(path: str, **fields) -> MemoryRecord:  # type: ignore[no-untyped-def]
    base = parse_record(
        path,
        memory_html(
            content_hash=True,
            title="Zinc note",
            claim="Zinc is a metal.",
            created="2026-01-01T00:00:00Z",
        ),
    )
    return msgspec.structs.replace(base, **fields)


def test_default_scope_is_active_non_task_memories() -> None:
    scope = Scope()
    assert scope(rec("areas/inbox/a.html"))
    assert not scope(rec("areas/inbox/t.html", memory_type="task"))
    assert not scope(rec("archive/2026/areas/inbox/a.html", archived=True))
    assert Scope(include_archived=True)(rec("archive/2026/areas/inbox/a.html", archived=True))


def test_types_are_any_of_and_naming_task_opts_in() -> None:
    assert Scope(types=("task",))(rec("a.html", memory_type="task"))
    assert not Scope(types=("episodic",))(rec("a.html", memory_type="semantic"))
    assert Scope(types=("episodic", "semantic"))(rec("a.html", memory_type="semantic"))


def test_workspace_is_strict_equality() -> None:
    assert Scope(workspace="alpha")(rec("projects/alpha/a.html", workspace="alpha"))
    assert not Scope(workspace="alpha")(rec("areas/a.html", workspace=None))
    assert not Scope(workspace="alpha")(rec("projects/Alpha/a.html", workspace="Alpha"))


def test_tags_broaden_and_blank_tags_do_not_narrow() -> None:
    record = rec("a.html", tags=("incident", "db"))
    assert Scope(tags=("nope", "db"))(record)
    assert not Scope(tags=("nope",))(record)
    assert Scope(tags=("  ", ""))(record)


def test_entity_is_one_reference_ascii_case_folded_over_entity_rows() -> None:
    record = rec(
        "a.html",
        entities=("person:Sasha",),
        entity_rows=(
            EntityRow("person", "Sasha"),
            EntityRow("concept", "quorum"),
            EntityRow("lang", "python"),
        ),
    )
    assert Scope(entity="PERSON:sasha")(record)
    assert Scope(entity="concept:Quorum")(record)
    assert Scope(entity="lang:python")(record)
    assert not Scope(entity="sasha")(record)
    assert not Scope(entity="concept:sasha")(record)
    accented = rec("b.html", entity_rows=(EntityRow("place", "CAFÉ"),))
    assert Scope(entity="place:café".replace("é", "É"))(accented)
    assert not Scope(entity="place:café")(accented)  # ASCII fold only, as SQLite's lower()


def test_facets_and_across_names_or_within_a_name() -> None:
    record = rec("a.html", facets=(Facet("doc-type", "runbook"), Facet("tier", "1")))
    assert Scope(facets=("doc-type=runbook",))(record)
    assert Scope(facets=("doc-type=guide", "doc-type=runbook"))(record)
    assert Scope(facets=("doc-type=runbook", "tier=1"))(record)
    assert not Scope(facets=("doc-type=runbook", "tier=2"))(record)
    assert not Scope(facets=("doc-type=Runbook",))(record)
    assert Scope(facets=("=x", "x=", "x"))(record)  # malformed specs are dropped, not narrowing


def test_parse_facet_filter() -> None:
    assert parse_facet_filter("query=a=b") == ("query", "a=b")
    assert parse_facet_filter(" tier = 1 ") == ("tier", "1")
    assert (
        parse_facet_filter("=x") is None
        and parse_facet_filter("x=") is None
        and parse_facet_filter("x") is None
    )
    assert parse_facet_filters(["a=1", "bad", "b=2"]) == (("a", "1"), ("b", "2"))


def test_as_of_is_a_validity_window_including_archived_records() -> None:
    scope = Scope(as_of="2026-06-01T00:00:00Z")
    assert scope(
        rec("archive/2026/a.html", archived=True, valid_from="2026-01-01", valid_until="2026-07-01")
    )
    assert not scope(rec("a.html", valid_from="2026-01-01", valid_until="2026-06-01T00:00:00Z"))
    assert not scope(rec("a.html", valid_from="2026-07-01"))
    assert scope(rec("a.html", valid_from=None, event_at="2026-05-01", created_at="2026-08-01"))
    assert not scope(rec("a.html", valid_from=None, event_at=None, created_at="2026-08-01"))
    assert not scope(rec("a.html", valid_from=None, event_at=None, created_at=None))


def test_from_filter_reads_the_wire_form() -> None:
    scope = Scope.from_filter(
        msgspec.convert(
            {
                "types": ["semantic"],
                "workspace": "w",
                "tags": ["t"],
                "entity": "a:b",
                "facets": ["x=1"],
                "include_archived": True,
                "as_of": "2026",
            },
            Filter,
        )
    )
    assert scope == Scope(("semantic",), "w", ("t",), "a:b", ("x=1",), True, "2026")
    assert Scope.from_filter(None) == Scope()
    with pytest.raises(InvalidParams):
        decode_request("search", b'{"query": "q", "filter": {"typo": 1}}')
    with pytest.raises(InvalidParams):
        decode_request("search", b'{"query": "q", "filter": {"tags": "t"}}')


def test_a_scope_narrows_search_before_the_arm_cap() -> None:
    records = [
        rec(
            f"areas/inbox/z-{i:02d}.html",
            memory_type="task" if i % 2 else "semantic",
            tags=(f"t{i % 3}",),
        )
        for i in range(50)
    ]
    hits = search_head(MapView(records), "zinc", limit=50, admit=Scope())
    assert len(hits) == 25 and all(int(h.path[-7:-5]) % 2 == 0 for h in hits)
    tagged = search_head(
        MapView(records), "zinc", limit=50, admit=Scope(types=("task",), tags=("t0",))
    )
    assert {h.path for h in tagged} == {
        r.path for i, r in enumerate(records) if i % 2 and i % 3 == 0
    }
