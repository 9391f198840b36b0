"""Search over index.db: the vector arm and degraded mode, scopes, snippets, supersession,
polarity, MMR, and the trace firewall."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pytest
from headd_plane import retrieval_sql
from headd_plane.mmr import MmrCandidate, apply_mmr
from headd_plane.plane import Plane, open_plane
from headd_plane.polarity import PolarityRow, negation_divergent, polarity_scored
from headd_plane.retrieval_sql import SNIPPET_MAX_CHARS, truncate_snippet
from headd_plane.scope import FacetFilter, Scope, assemble_scope, parse_facet_filter
from support.memory import memory_html
from support.plane import HashEmbedder
from support.stores import Store

from headd.wire.plane_answers import ArchivedMatch

NOW = "2026-11-30T10:00:00.000Z"
LONG_BODY = " ".join(f"Sentence {n} about the ledger migration window." for n in range(80))


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit(
        {
            "areas/ops/gate.html": memory_html(
                "Deploy gate",
                "The deploy gate blocks Friday releases.",
                tags=["deploy"],
                entities=["service:Checkout-API"],
                facets=[("tier", "1"), ("kind", "rule")],
            ),
            "areas/ops/gate-not.html": memory_html(
                "Deploy gate (negated)",
                "The deploy gate does not block Friday releases.",
                tags=["deploy"],
            ),
            "projects/pay/ledger.html": memory_html(
                "Ledger",
                "The ledger runs on Postgres 15.",
                body=LONG_BODY,
                tags=["db"],
                entities=["service:ledger"],
                facets=[("tier", "2")],
            ),
            "projects/pay/todo.html": memory_html(
                "Ledger todo",
                "Upgrade the ledger database.",
                memory_type="task",
                task_status="todo",
            ),
            "archive/2026/areas/ops/old-gate.html": memory_html(
                "Old gate",
                "The deploy gate used to block Mondays.",
                tags=["legacy"],
            ),
            "areas/ops/new-gate.html": memory_html(
                "New gate",
                "The deploy gate now blocks Fridays only.",
                links=[("supersedes", "/archive/2026/areas/ops/old-gate.html")],
            ),
        }
    )
    return store


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Plane:
    plane = open_plane(_store(tmp_path_factory.mktemp("lexical")).root, now=lambda: NOW)
    plane.rebuild()
    return plane


def paths(plane: Plane, query: str, scope: Scope | None = None, limit: int = 10) -> list[str]:
    return [h.path for h in plane.search(query, scope, limit).hits]


def test_lexical_floor_is_degraded_and_names_its_arms(lexical: Plane) -> None:
    result = lexical.search("ledger postgres")
    assert result.degraded and result.vector_coverage == 0.0
    assert result.arms == ["fts", "recency", "salience"]
    assert result.hits[0].path == "projects/pay/ledger.html"
    assert "fts" in result.hits[0].arms
    assert result.hits[0].entities == ["service:ledger"]


def test_tasks_are_out_unless_named(lexical: Plane) -> None:
    assert "projects/pay/todo.html" not in paths(lexical, "ledger upgrade")
    assert paths(lexical, "ledger upgrade", Scope(memory_types=("task",))) == [
        "projects/pay/todo.html"
    ]


def test_scope_axes(lexical: Plane) -> None:
    assert set(paths(lexical, "gate", Scope(workspace="pay"))) == {"projects/pay/ledger.html"}
    assert set(paths(lexical, "x", Scope(tags=("db", "legacy")))) == {"projects/pay/ledger.html"}
    assert paths(lexical, "gate", Scope(entity="SERVICE:checkout-api")) == ["areas/ops/gate.html"]
    tier = (FacetFilter("tier", "1"), FacetFilter("tier", "2"))
    assert set(paths(lexical, "x", Scope(facets=tier))) == {
        "areas/ops/gate.html",
        "projects/pay/ledger.html",
    }
    both = (FacetFilter("tier", "2"), FacetFilter("kind", "rule"))
    assert paths(lexical, "x", Scope(facets=both)) == []
    archived = paths(lexical, "mondays", Scope(include_archived=True))
    assert archived[0] == "archive/2026/areas/ops/old-gate.html"


def test_an_empty_scope_points_at_archived_matches(lexical: Plane) -> None:
    result = lexical.search("anything", Scope(tags=("legacy",)))
    assert result.hits == [] and result.scope_empty
    assert result.archived_matches == 1
    assert result.archived == [
        ArchivedMatch("archive/2026/areas/ops/old-gate.html", "areas/ops/new-gate.html")
    ]
    unscoped = lexical.search("zzzz-nothing")
    assert not unscoped.scope_empty


def test_an_archived_hit_names_what_superseded_it(lexical: Plane) -> None:
    result = lexical.search("mondays", Scope(include_archived=True))
    assert result.hits[0].superseded_by == "areas/ops/new-gate.html"


def test_snippet_is_truncated_inside_the_ceiling(lexical: Plane) -> None:
    hit = lexical.search("ledger postgres").hits[0]
    assert len(hit.snippet) == SNIPPET_MAX_CHARS and hit.snippet.endswith("…")
    assert truncate_snippet("short") == "short"


def test_vector_arm_runs_at_full_coverage_and_degrades_below_the_floor(tmp_path: Path) -> None:
    store = _store(tmp_path)
    plane = open_plane(store.root, embedder=HashEmbedder(), now=lambda: NOW)
    plane.rebuild(embed=True)
    result = plane.search("ledger postgres")
    assert not result.degraded and result.vector_coverage == 1.0
    assert result.arms == ["fts", "vector", "recency", "salience"]
    assert "vector" in result.hits[0].arms
    plane.db.run("DELETE FROM embeddings WHERE rowid IN (SELECT rowid FROM embeddings LIMIT 1)")
    below = plane.search("ledger postgres")
    assert below.degraded and "vector" not in below.arms and below.vector_coverage < 0.95
    failing = open_plane(store.root, embedder=HashEmbedder(fail=True), now=lambda: NOW)
    failing.embed_missing()  # the model is down: nothing lands, nothing fails
    assert failing.search("ledger").degraded


def test_polarity_demotes_a_negated_twin_below_the_agreeing_one() -> None:
    v = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    rows = [
        PolarityRow("b.html", "The gate does not block releases.", "", v, "neg"),
        PolarityRow("a.html", "The gate blocks releases.", "", v * 0.99, "pos"),
        PolarityRow("c.html", "Unrelated.", "", np.array([0.0, 1.0, 0.0], dtype=np.float32), "c"),
    ]
    order = [s.item.path for s in polarity_scored("does the gate block releases", rows)]
    # b's score becomes half the agreeing twin's (1/2 -> 1/4): below c's 1/3 as well
    assert order == ["a.html", "c.html", "b.html"]
    assert negation_divergent("x is safe", "x is not safe")
    assert not negation_divergent("x isn't safe", "x is not safe")
    without_vectors = [PolarityRow(r.path, r.claim, "", None, r.row) for r in rows]
    kept = [s.item.path for s in polarity_scored("does the gate block releases", without_vectors)]
    assert kept == ["b.html", "a.html", "c.html"]


def test_mmr_spreads_near_duplicates_and_keeps_order_without_vectors() -> None:
    same = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    pool = [
        MmrCandidate("a", 1.0, same),
        MmrCandidate("b", 0.5, same),
        MmrCandidate("c", 0.34, other),
    ]
    assert [c.path for c in apply_mmr(pool, 2)] == ["a", "c"]
    bare = [MmrCandidate(c.path, c.score, None) for c in pool]
    assert [c.path for c in apply_mmr(bare, 3)] == ["a", "b", "c"]


def test_scope_binds_from_slot_five_and_facet_specs_parse() -> None:
    assembled = assemble_scope(Scope(workspace="w", tags=("t",), entity="a:b"))
    assert assembled.params == ("w", "t", "a:b")
    assert "?5" in assembled.file_filter and "?7" in assembled.file_filter
    assert assemble_scope().file_filter.count("AND") == 2
    assert parse_facet_filter("query=a=b") == FacetFilter("query", "a=b")
    assert parse_facet_filter("=x") is None and parse_facet_filter("x=") is None


def test_no_assembled_statement_names_a_trace_table() -> None:
    scope = assemble_scope(Scope(tags=("t",), facets=(FacetFilter("a", "b"),), as_of="2026"))
    arms = retrieval_sql.active_arms(True, True, True)
    sql = retrieval_sql.build_rrf_sql(arms, scope, retrieval_sql.now_sql(None)) or ""
    sql += retrieval_sql.build_fts_probe_sql(scope) + (
        retrieval_sql.build_snippet_sql(3, True) or ""
    )
    assert "trace" not in sql.lower() and len(arms) == 4


def test_the_teams_hashing_embedder_fits_through_the_port(tmp_path: Path) -> None:
    from headd.embed.hashing import HashingEmbedder

    embedder = HashingEmbedder()
    plane = open_plane(_store(tmp_path).root, embedder=embedder, now=lambda: NOW)
    report = plane.rebuild(embed=True)
    assert report.embeddings_written == report.chunks_indexed
    assert plane.status().space == embedder.space
    result = plane.search("ledger postgres")
    assert not result.degraded and "vector" in result.arms


def test_a_read_only_reader_answers_beside_the_writer(lexical: Plane) -> None:
    from headd_plane.plane import open_retrieval

    reader = open_retrieval(lexical.store)
    assert reader.db.readonly and reader.db.has_state
    assert [h.path for h in reader.search("ledger postgres").hits] == paths(
        lexical, "ledger postgres"
    )


def test_the_contract_filter_and_the_wire_shapes(lexical: Plane) -> None:
    from headd_plane.scope import scope_from_filter

    from headd.wire.filter import Filter

    faceted = scope_from_filter(Filter(facets=["tier=2", "bad"], include_archived=True))
    assert faceted == Scope(facets=(FacetFilter("tier", "2"),), include_archived=True)
    scope = scope_from_filter(Filter(types=["task"], workspace="pay", as_of=None))
    assert scope == Scope(memory_types=("task",), workspace="pay")
    wire = msgspec.to_builtins(lexical.search("ledger", scope).answer("sha"))
    assert [h["path"] for h in wire["hits"]] == ["projects/pay/todo.html"]
    assert {"path", "score", "title", "claim", "arms"} <= set(wire["hits"][0])
    assert wire["degraded"] is True and wire["arms"] == ["fts", "recency", "salience"]
    assert wire["hits"][0]["arms"] == ["fts", "recency"]  # salience never ranks a task
    status = msgspec.to_builtins(lexical.status())
    assert status["files"] == 6 and status["indexed"] and not status["stale"]
    assert status["vectors"] == {
        "chunks": 8,
        "embeddings": 0,
        "coverage": 0.0,
        "model": "none@1",
    }  # the long body is 3 chunks
