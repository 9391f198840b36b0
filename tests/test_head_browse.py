"""Browsing a version (``headd.head.browse``): listing pages, the census, neighbourhoods.

The listing's invariant is a property: walking the pages by their cursors yields exactly the
admitted records in path order, each once, whatever the page size and the filter.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.errors import InvalidOp
from headd.head.browse import (
    census,
    entity_activity,
    list_records,
    listing_scope,
    neighbours,
    tasks,
)
from headd.head.overlay import with_overlay
from headd.head.version import HeadVersion, version_from_records
from headd.memfile.parse import parse_memory
from headd.ops import Retask
from headd.wire.browse import EntityActivityRequest, ListRequest, NeighborsRequest, TasksRequest

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
    assert list_records(view, ListRequest(para="archive")).files == []
    assert [
        f.path for f in list_records(view, ListRequest(para="archive", include_archived=True)).files
    ] == ["archive/2026/m001.html"]
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


def _tasks() -> HeadVersion:
    files = _task_files()
    return version_from_records([parse_memory(p, h) for p, h in files.items()], "2" * 40)


def _task_files() -> dict[str, str]:
    blocker = memhtml_task("Blocker", "todo", links=(("blocks", "/areas/inbox/tasks/b.html"),))
    blocked = memhtml_task("Blocked", "todo", due="2026-12-20")
    done = memhtml_task("Done", "done", links=(("blocks", "/areas/inbox/tasks/b.html"),))
    files = {
        "areas/inbox/tasks/a.html": blocker,
        "areas/inbox/tasks/b.html": blocked,
        "areas/inbox/tasks/c.html": done,
        "areas/inbox/fact.html": memory_html("Fact", "A fact.", entities=("service:api",)),
    }
    return files


def memhtml_task(title: str, status: str, **kw: Any) -> str:
    due = kw.pop("due", None)
    metas = {"memhtml-due": due} if due else None
    return memory_html(
        title, f"{title} is a task.", memory_type="task", task_status=status, metas=metas, **kw
    )


def test_tasks_are_a_scan_with_open_blockers() -> None:
    view = _tasks()
    listed = tasks(view, TasksRequest())
    assert [t.path for t in listed.tasks] == [
        "areas/inbox/tasks/a.html",
        "areas/inbox/tasks/b.html",
        "areas/inbox/tasks/c.html",
    ]
    assert listed.tasks[1].blocked_by == ["areas/inbox/tasks/a.html"]  # the done one is not
    assert [t.path for t in tasks(view, TasksRequest(status="done")).tasks] == [
        "areas/inbox/tasks/c.html"
    ]
    page = tasks(view, TasksRequest(limit=1, cursor="areas/inbox/tasks/a.html"))
    assert [t.path for t in page.tasks] == ["areas/inbox/tasks/b.html"]
    assert page.next_cursor == "areas/inbox/tasks/b.html"


def test_a_retask_moves_the_status_in_place_and_refuses_a_non_task() -> None:
    view = _tasks()
    texts = {parse_memory(p, h).blob_sha: h for p, h in _task_files().items()}
    op = Retask(path="areas/inbox/tasks/b.html", status="doing", at="2026-12-01T00:00:00Z")
    moved = with_overlay(view, [op], texts.__getitem__)
    record = moved.record("areas/inbox/tasks/b.html")
    assert record is not None
    assert (record.task_status, record.updated_at) == ("doing", "2026-12-01T00:00:00Z")
    assert record.content_hash == view.record("areas/inbox/tasks/b.html").content_hash  # type: ignore[union-attr]
    with pytest.raises(InvalidOp):
        with_overlay(view, [Retask(path="areas/inbox/fact.html", status="done")], texts.get)
    with pytest.raises(InvalidOp):
        bad = Retask(path="areas/inbox/tasks/b.html", status="finished")
        with_overlay(view, [bad], texts.__getitem__)


def test_entity_activity_counts_entity_rows_and_clamps_its_limit() -> None:
    view = _tasks()
    found = entity_activity(view, EntityActivityRequest(limit=0))
    assert found.limit == 1 and found.entity_count == 1
    assert [(r.entity, r.file_count) for r in found.entities] == [("service:api", 1)]
    assert entity_activity(view, EntityActivityRequest(type="person")).entities == []
