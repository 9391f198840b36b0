"""With embeddings off and a fresh state plane, our search returns memhtml 0.15.1's paths, in
its order, for every recorded case (tests/data/plane_memhtml_search.json, recorded from the
real tool by bench/plane_record_memhtml.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from headd_plane.plane import Plane, open_plane
from headd_plane.scope import Scope, parse_facet_filters
from support.data import clone_anchor

RECORDED = json.loads(
    (Path(__file__).parent / "data" / "plane_memhtml_search.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Plane:
    store = clone_anchor(tmp_path_factory.mktemp("parity") / "store")
    plane = open_plane(store)
    plane.rebuild()
    return plane


def _parse(argv: list[str]) -> tuple[str, Scope, int]:
    query, rest = argv[0], argv[1:]
    options: dict[str, Any] = {"types": [], "tags": [], "facets": []}
    limit = 10
    i = 0
    while i < len(rest):
        flag = rest[i]
        if flag == "--include-archived":
            options["include_archived"] = True
            i += 1
            continue
        value = rest[i + 1]
        i += 2
        if flag == "--type":
            options["types"].append(value)
        elif flag == "--tag":
            options["tags"].append(value)
        elif flag == "--facet":
            options["facets"].append(value)
        elif flag == "--limit":
            limit = int(value)
        else:
            options[flag[2:].replace("-", "_")] = value
    scope = Scope(
        memory_types=tuple(options["types"]),
        workspace=options.get("workspace"),
        tags=tuple(options["tags"]),
        entity=options.get("entity"),
        facets=parse_facet_filters(options["facets"]),
        include_archived=options.get("include_archived", False),
        as_of=options.get("as_of"),
    )
    return query, scope, limit


@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda c: " ".join(c["argv"]))
def test_same_paths_in_the_same_order_as_memhtml(plane: Plane, case: dict[str, Any]) -> None:
    query, scope, limit = _parse(case["argv"])
    result = plane.search(query, scope, limit, now_epoch=RECORDED["recorded_at"])
    assert [h.path for h in result.hits] == case["paths"]
    assert result.degraded and "vector" not in result.arms
    assert result.scope_empty == case["scope_empty"]
    assert result.archived_matches == case["archived_matches"]
