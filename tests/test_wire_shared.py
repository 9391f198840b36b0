"""What the daemon and its clients share, and what they must not: the client never imports the
daemon, and both scopes compile from the one parse of the wire's ``filter``."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest
from headd_plane.scope import FacetFilter
from headd_plane.scope import scope_from_filter as plane_scope

from headd.errors import InvalidParams
from headd.head.scope import Scope as HeadScope
from headd.wire import methods
from headd.wire.filter import Filter

REPO = Path(__file__).resolve().parents[1]


def daemon_imports(source: str) -> list[str]:
    """Every ``headd.daemon`` module a Python source imports (at any depth)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found += [n for n in names if n == "headd.daemon" or n.startswith("headd.daemon.")]
    return found


def test_the_rule_sees_a_daemon_import() -> None:
    assert daemon_imports("from headd.daemon.io_ import LineFramer") == ["headd.daemon.io_"]
    assert daemon_imports("def f():\n    from headd.daemon import plane_calls") == ["headd.daemon"]


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "client" / "headd_client").glob("*.py"))
    + sorted((REPO / "sqlite_plane" / "headd_plane").rglob("*.py")),
    ids=lambda p: p.name,
)
def test_neither_the_client_nor_the_plane_imports_the_daemon(path: Path) -> None:
    assert daemon_imports(path.read_text(encoding="utf-8")) == []


def test_the_methods_decode_the_shared_filter() -> None:
    request = methods.decode_request("search", b'{"query":"q","filter":{"types":["fact"]}}')
    assert isinstance(request, methods.Search) and isinstance(request.filter, Filter)


@pytest.mark.parametrize("bad", [{"typo": 1}, {"tags": "t"}, {"include_archived": "yes"}])
def test_a_bad_filter_is_refused_before_either_scope_sees_it(bad: dict[str, object]) -> None:
    """Both scopes take the typed ``Filter`` only: a bad one is refused where it is decoded."""
    params = msgspec.json.encode({"query": "q", "filter": bad})
    with pytest.raises(InvalidParams):
        methods.decode_request("search", params)


def test_both_scopes_read_a_filter_the_same_way() -> None:
    wire = {
        "types": ["semantic"],
        "workspace": "pay",
        "tags": ["t", " "],
        "entity": "service:x",
        "facets": ["tier = 2", "bad", "=x", "query=a=b"],
        "include_archived": True,
        "as_of": "2026-01-01",
    }
    parsed = msgspec.convert(wire, Filter)
    head, plane = HeadScope.from_filter(parsed), plane_scope(parsed)
    assert head.types == plane.memory_types == ("semantic",)
    assert head.workspace == plane.workspace == "pay"
    assert head.entity == plane.entity == "service:x"
    assert head.include_archived is plane.include_archived is True
    assert head.as_of == plane.as_of == "2026-01-01"
    assert sorted(head._facets.items()) == [
        ("query", frozenset({"a=b"})),
        ("tier", frozenset({"2"})),
    ]
    assert plane.facets == (FacetFilter("tier", "2"), FacetFilter("query", "a=b"))
    assert HeadScope.from_filter(None) == HeadScope() and plane_scope(None) == type(plane)()
