"""``successors.resolve``, the pure walk behind the ``resolve`` method, on versions built from
parsed files: supersedes chains, a cycle, live before archived, an archived copy, a miss.

Mutation notes (each applied once, the named test seen red, then reverted):
- the ``following in chain`` stop removed -> ``test_a_supersedes_cycle_stops_where_it_closes``
  (the walk runs MAX_STEPS and the chain grows past the cycle).
- ``min(found)`` turned into ``max(found)`` -> ``test_a_live_successor_wins_over_an_archived_one``.
"""

from __future__ import annotations

import pytest
from support.memory import memory_html

from headd.errors import PathNotFound
from headd.head.successors import resolve
from headd.head.version import HeadVersion, version_from_records
from headd.memfile.parse import parse_memory


def version_of(files: dict[str, str]) -> HeadVersion:
    return version_from_records([parse_memory(p, html) for p, html in files.items()], "0" * 40)


def superseding(title: str, *old: str, status: str = "active") -> str:
    return memory_html(
        title, f"{title} holds.", links=tuple(("supersedes", "/" + o) for o in old), status=status
    )


def test_a_chain_of_supersedes_ends_at_the_newest_memory() -> None:
    a, b, c = "areas/a.html", "areas/b.html", "areas/c.html"
    view = version_of(
        {a: memory_html("A", "A holds."), b: superseding("B", a), c: superseding("C", b)}
    )
    found = resolve(view, "/" + a)
    assert found.path == c and found.chain == (a, b, c)
    assert resolve(view, c).chain == (c,)


def test_a_supersedes_cycle_stops_where_it_closes() -> None:
    a, b = "areas/a.html", "areas/b.html"
    view = version_of({a: superseding("A", b), b: superseding("B", a)})
    found = resolve(view, a)
    assert found.chain == (a, b) and found.path == b


def test_a_live_successor_wins_over_an_archived_one() -> None:
    """Both name ``old``; the archived one sorts first by path, the live one still wins."""
    old, live, gone = "areas/old.html", "areas/live.html", "archive/2026/areas/gone.html"
    view = version_of(
        {
            old: memory_html("Old", "Old holds."),
            live: superseding("Live", old),
            gone: superseding("Gone", old, status="archived"),
        }
    )
    assert view.record(gone) is not None and view.record(gone).archived  # type: ignore[union-attr]
    assert resolve(view, old).path == live


def test_a_missing_path_is_refused() -> None:
    view = version_of({"areas/a.html": memory_html("A", "A holds.")})
    with pytest.raises(PathNotFound):
        resolve(view, "areas/nowhere.html")
