"""Archive paths (a left-invertible map) and the eviction / supersession stamps."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.writer_vectors import (
    HeadEditVector,
    StoreHistory,
    cached_head_edits,
    cached_history,
    instant,
    meta_value,
)

from headd.errors import InvalidOp
from headd.memfile.archive import (
    archive_path,
    archive_stamps,
    archive_year_of,
    is_archive_path,
    original_path,
    supersede_moment,
    supersede_stamps,
    superseding_stamps,
    valid_until_for,
)
from headd.memfile.hashes import blob_sha_of, content_hash_of
from headd.memfile.head_edit import read_links, read_meta, set_meta
from headd.memfile.parse import parse_memory
from headd.memfile.render import MemoryFields, render_memory


@pytest.fixture
def writer_head_edits(anchor_store: Path) -> tuple[HeadEditVector, ...]:
    return cached_head_edits(anchor_store)


@pytest.fixture
def writer_history(anchor_store: Path) -> StoreHistory:
    return cached_history(anchor_store)


_segment = st.text(alphabet="abcxyz-_.0123456789é", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)
_paths = st.builds(
    lambda bucket, segs: "/".join([bucket, *segs]) + ".html",
    st.sampled_from(["projects", "areas", "resources", "archive"]),
    st.lists(_segment, min_size=1, max_size=4),
)
_years = st.integers(min_value=0, max_value=99999)


@settings(max_examples=100, deadline=None)
@given(_paths, _years, _years)
def test_archive_paths_round_trip_even_twice_archived(path: str, y1: int, y2: int) -> None:
    once = archive_path(path, y1)
    twice = archive_path(once, y2)
    assert original_path(once) == path
    assert original_path(twice) == once
    assert original_path(original_path(twice) or "") == path
    assert is_archive_path(once) and archive_year_of(twice) == y2


@settings(max_examples=100, deadline=None)
@given(_paths, st.sampled_from([".", ".."]), st.integers(min_value=0, max_value=4), _years)
def test_dot_segments_are_refused(path: str, bad: str, at: int, year: int) -> None:
    segments = path.split("/")
    segments.insert(min(at, len(segments)), bad)
    crooked = "/".join(segments)
    with pytest.raises(InvalidOp):
        archive_path(crooked, year)
    with pytest.raises(InvalidOp):
        original_path("archive/2026/" + crooked)


@pytest.mark.parametrize("path", ["", "/", "//", "areas/./x.html", "areas/x/.."])
def test_empty_and_dot_paths_are_refused(path: str) -> None:
    """Doubled slashes normalize away (as memhtml's normalizePath does), so what is left of an
    empty segment is an empty path."""
    with pytest.raises(InvalidOp):
        archive_path(path, 2026)


@pytest.mark.parametrize(
    ("path", "original"),
    [
        ("archive/2026/areas/x.html", "areas/x.html"),
        ("archive/2026/archive/2025/areas/x.html", "archive/2025/areas/x.html"),
        ("/archive//2026/areas/x.html", "areas/x.html"),
        ("archive/202/areas/x.html", None),  # a year is four digits or more
        ("archive/areas/x.html", None),
        ("areas/archive/2026/x.html", None),
        ("archive/12345/areas/x.html", "areas/x.html"),
    ],
)
def test_original_path_strips_exactly_one_partition(path: str, original: str | None) -> None:
    assert original_path(path) == original


def test_year_segments_are_four_digits() -> None:
    assert archive_path("areas/x.html", 999) == "archive/0999/areas/x.html"
    assert archive_path("/areas//x.html", 2026) == "archive/2026/areas/x.html"
    with pytest.raises(InvalidOp):
        archive_path("areas/x.html", -1)
    with pytest.raises(InvalidOp):
        archive_path("", 2026)


NOW = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC)
BASE = MemoryFields(
    title="Old fact",
    memory_type="semantic",
    created="2026-11-30T09:00:00Z",
    claim="The pool ceiling is 64.",
    tags=("database",),
)


def test_archive_stamps() -> None:
    html = render_memory(BASE)
    out = archive_stamps(html, NOW)
    assert read_meta(out, "status") == "archived"
    assert read_meta(out, "updated") == read_meta(out, "archived") == "2026-12-01T08:00:00Z"
    assert content_hash_of(out) == content_hash_of(html)
    assert out == render_memory(
        MemoryFields(
            **{
                **{f: getattr(BASE, f) for f in BASE.__struct_fields__},
                "status": "archived",
                "updated": "2026-12-01T08:00:00Z",
                "archived_at": "2026-12-01T08:00:00Z",
            }
        )
    )


def test_valid_until_is_min_wins() -> None:
    html = render_memory(BASE)
    assert valid_until_for(html, "2026-10-01") == "2026-10-01"
    bounded = set_meta(html, "valid-until", "2026-05-01")
    assert valid_until_for(bounded, "2026-10-01") is None  # an earlier bound stands
    assert valid_until_for(bounded, "2026-01-01") == "2026-01-01"
    out = supersede_stamps(bounded, new_path="areas/inbox/new.html", moment="2026-10-01", now=NOW)
    assert read_meta(out, "valid-until") == "2026-05-01"
    assert read_meta(out, "superseded-by") == "/areas/inbox/new.html"


def test_superseding_stamps_keep_an_explicit_valid_from() -> None:
    html = render_memory(BASE)
    moment = supersede_moment(html, "2026-06-01", NOW)
    assert moment == "2026-06-01"
    assert supersede_moment(html, None, NOW) == "2026-12-01T08:00:00Z"
    out = superseding_stamps(html, old_archive_path="archive/2026/areas/old.html", moment=moment)
    assert read_meta(out, "valid-from") == "2026-06-01"
    assert [(link.rel, link.href) for link in read_links(out)] == [
        ("supersedes", "/archive/2026/areas/old.html")
    ]
    explicit = set_meta(html, "valid-from", "2025-01-01")
    assert supersede_moment(explicit, "2026-06-01", NOW) == "2025-01-01"
    again = superseding_stamps(explicit, old_archive_path="archive/2026/areas/old.html", moment="x")
    assert read_meta(again, "valid-from") == "2025-01-01"


# ---------------------------------------------------------------------------------------------
# the corpus: every recorded archive, task completion, correction and consolidation, re-done


def test_every_recorded_move_is_reproduced(
    writer_history: StoreHistory,
    writer_head_edits: tuple[HeadEditVector, ...],
) -> None:
    history = writer_history
    done = 0
    for v in writer_head_edits:
        argv = v.argv or []
        if v.status == "R":
            year = int(v.path_after.split("/")[1])
            assert archive_path(v.path_before, year) == v.path_after
            assert original_path(v.path_after) == v.path_before
        now = instant(meta_value(v.after, "updated") or "")  # the tool's clock at that commit
        if argv[1:2] == ["archive"] or (argv[1:3] == ["task", "status"] and argv[4] == "done"):
            html = v.before
            if argv[1] == "task":
                html = set_meta(html, "memhtml-task-status", "done")
                html = set_meta(html, "memhtml-updated", meta_value(v.after, "updated") or "")
            out = archive_stamps(html, now)
        elif argv[1:2] == ["correct"] or "--consolidate" in argv:
            # the paths the tool reported for the call
            new_path = v.data["path"]
            old_archive = v.data.get("archivedPath") or v.data.get("superseded_path")
            assert old_archive is not None
            new_html = history.text(v.commit, new_path)
            record = parse_memory(new_path, new_html)
            moment = supersede_moment(new_html, record.event_at, now)
            if v.status == "R":
                assert v.path_after == old_archive
                out = supersede_stamps(v.before, new_path=new_path, moment=moment, now=now)
            else:  # the consolidation's winner, written by the batch before
                assert v.path_after == new_path
                before_record = parse_memory(new_path, v.before)
                moment = supersede_moment(v.before, before_record.event_at, now)
                out = superseding_stamps(v.before, old_archive_path=old_archive, moment=moment)
        else:
            continue
        assert blob_sha_of(out) == v.blob_after, v.subject
        assert content_hash_of(out) == v.content_hash_before
        done += 1
    assert done == 12  # 4 archives, 2 task completions, 4 corrections, 2 consolidation files
