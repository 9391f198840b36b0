"""Browsing a version (``headd.head.browse``): listing pages, the census, neighbourhoods.

The listing's invariant is a property: walking the pages by their cursors yields exactly the
admitted records in path order, each once, whatever the page size and the filter.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.head.browse import census, list_records, listing_scope, neighbours
from headd.head.version import HeadVersion, version_from_records
from headd.memfile.parse import parse_memory
from headd.wire.browse import ListRequest, NeighborsRequest

TYPES = ("semantic", "episodic", "task", "procedural")
BUCKETS = ("areas/inbox", "projects/p", "resources/r", "archive/2026")


def _version(specs: list[tuple[int, int, bool, bool]]) -> HeadVersion:
    records = []
    for i, (type_at, bucket_at, tagged, archived_meta) in enumerate(specs):
        bucket = BUCKETS[bucket_at]
        archived = bucket.startswith("archive") or archived_meta
        path = f"{bucket}/m{i:03d}.html"
        html = memory_html(
            f"Memory {i}",
            f"Memory number {i} holds a fact.",
            memory_type=TYPES[type_at],
            status="archived" if archived else "active",
            tags=("red",) if tagged else (),
            task_status="todo" if TYPES[type_at] == "task" else None,
        )
        records.append(parse_memory(path, html))
    return version_from_records(records, "0" * 40)


SPECS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.booleans(), st.booleans()), max_size=40
)
REQUESTS = st.builds(
    ListRequest,
    types=st.none() | st.lists(st.sampled_from(TYPES), min_size=1, max_size=2),
    tags=st.none() | st.just(["red"]),
    para=st.none() | st.sampled_from(["areas", "projects", "archive"]),
    include_archived=st.booleans(),
    limit=st.integers(1, 7),
)


@settings(max_examples=60, deadline=None)
@given(SPECS, REQUESTS)
def test_pages_by_cursor_list_every_admitted_record_once_in_path_order(
    specs: list[tuple[int, int, bool, bool]], request: ListRequest
) -> None:
    view = _version(specs)
    admit = listing_scope(request)
    expected = sorted(
        r.path
        for r in view.records()
        if admit(r) and (request.para is None or r.path.startswith(request.para + "/"))
    )
    seen: list[str] = []
    cursor = None
    for _ in range(len(specs) + 2):
        page = list_records(view, ListRequest(**{**_fields(request), "cursor": cursor}))
        assert len(page.files) <= request.limit
        seen.extend(f.path for f in page.files)
        cursor = page.next_cursor
        if cursor is None:
            break
        assert cursor == page.files[-1].path
    assert seen == expected


def _fields(request: ListRequest) -> dict[str, object]:
    return {name: getattr(request, name) for name in request.__struct_fields__}


def test_a_listing_holds_tasks_and_archived_records_only_when_asked() -> None:
    view = _version([(2, 0, False, False), (0, 3, False, False)])
    everything = [f.path for f in list_records(view, ListRequest()).files]
    assert everything == ["areas/inbox/m000.html"]  # the task; no archived record
    archived = list_records(view, ListRequest(include_archived=True)).files
    assert [f.path for f in archived] == ["archive/2026/m001.html", "areas/inbox/m000.html"]
    assert [f.path for f in list_records(view, ListRequest(para="archive")).files] == [
        "archive/2026/m001.html"
    ]
    assert list_records(view, ListRequest(types=["semantic"])).files == []


@settings(max_examples=40, deadline=None)
@given(SPECS)
def test_the_census_counts_every_record_once(specs: list[tuple[int, int, bool, bool]]) -> None:
    view = _version(specs)
    counted = census(view, dirty=False, vector_coverage_floor=0.95)
    assert sum(counted.counts_by_type.values()) + counted.archived_count == view.size
    assert counted.archived_count == sum(1 for r in view.records() if r.archived)
    assert list(counted.counts_by_type) == sorted(counted.counts_by_type)


def _linked() -> HeadVersion:
    a = memory_html("A", "A is first.", links=(("relates_to", "/areas/b.html"),))
    b = memory_html("B", "B is second.", links=(("caused_by", "/areas/c.html"),))
    c = memory_html("C", "C is third.")
    d = memory_html("D", "D points at A.", links=(("supports", "/areas/a.html"),))
    files = {"areas/a.html": a, "areas/b.html": b, "areas/c.html": c, "areas/d.html": d}
    return version_from_records([parse_memory(p, h) for p, h in files.items()], "1" * 40)


def test_neighbours_walk_links_out_then_in_at_their_first_hop() -> None:
    view = _linked()
    one = neighbours(view, NeighborsRequest(path="areas/a.html"))
    assert one is not None
    assert [(n.path, n.rel, n.hop) for n in one.nodes] == [
        ("areas/b.html", "relates_to", 1),
        ("areas/d.html", "supports", 1),
    ]
    assert one.edges == 2  # out to B, and in from D
    two = neighbours(view, NeighborsRequest(path="/areas/a.html", depth=2))
    assert two is not None
    assert [(n.path, n.hop) for n in two.nodes][-1] == ("areas/c.html", 2)
    assert two.edges == 3
    narrowed = neighbours(view, NeighborsRequest(path="areas/a.html", rels=["supports"]))
    assert narrowed is not None and [n.path for n in narrowed.nodes] == ["areas/d.html"]
    capped = neighbours(view, NeighborsRequest(path="areas/a.html", depth=2, limit=1))
    assert capped is not None
    assert (len(capped.nodes), capped.dropped_node_count) == (1, 2)
    assert neighbours(view, NeighborsRequest(path="areas/none.html")) is None
