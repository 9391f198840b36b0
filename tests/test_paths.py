"""``headd.paths``: one contract per name, and the one rule that refuses a path on the wire."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.paths import (
    MAX_COMPONENT_BYTES,
    MAX_PATH_BYTES,
    normalize_path,
    origin_path_of,
    para_of,
    path_problem,
    record_para,
    workspace_of,
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="/a.", max_size=12))
def test_normalize_is_the_regex_rule_and_idempotent(path: str) -> None:
    collapsed = re.sub("/{2,}", "/", re.sub("^/+", "", path))
    assert normalize_path(path) == (collapsed[:-1] if collapsed.endswith("/") else collapsed)
    assert normalize_path(normalize_path(path)) == normalize_path(path)


@pytest.mark.parametrize(
    ("path", "bucket", "para"),
    [
        ("areas/x.html", "areas", "areas"),
        ("/projects//p/x.html", "projects", "projects"),
        ("archive/2026/areas/x.html", "archive", "archive"),
        ("resources/x.html", "resources", "resources"),
        ("misc/outside-buckets.html", None, "areas"),
        ("areas", None, "areas"),
        ("x.html", None, "areas"),
    ],
)
def test_para_of_is_the_bucket_and_record_para_falls_back_to_areas(
    path: str, bucket: str | None, para: str
) -> None:
    assert para_of(path) == bucket
    assert record_para(path) == para


def test_workspace_and_archive_origin() -> None:
    assert workspace_of("projects/search/tasks/x.html") == "search"
    assert workspace_of("/projects//search/x.html") == "search"
    assert workspace_of("projects/x.html") is None
    assert workspace_of("areas/search/x.html") is None
    assert origin_path_of("archive/2026/areas/x.html") == "areas/x.html"
    assert origin_path_of("archive/2026/archive/2025/areas/x.html") == "archive/2025/areas/x.html"
    assert origin_path_of("archive/26/areas/x.html") is None
    assert origin_path_of("areas/x.html") is None


@pytest.mark.parametrize(
    "path",
    [
        "areas/x.html",
        "/areas/x.html",
        "areas//x.html",
        "projects/p/tasks/t.html",
        "archive/2026/areas/x.html",
        "areas/" + "é" * 125 + ".html",  # 255 bytes
        "areas/./x.html",  # softer rules are the session validation's
        "areas/x.md",
    ],
)
def test_good_paths_pass(path: str) -> None:
    assert path_problem(path) is None


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("areas/x\x00.html", "control"),
        ("areas/x\n.html", "control"),
        ("areas/x\r.html", "control"),
        ("areas/x\x7f.html", "control"),
        ("areas\\x.html", "backslash"),
        ("areas/" + "x" * (MAX_COMPONENT_BYTES + 1), "component"),
        ("areas/" + "é" * 128 + ".html", "component"),
        ("areas/" + "d/" * (MAX_PATH_BYTES // 2) + "x.html", "longer than"),
        ("areas/../x.html", "`..`"),
        ("areas/x/..", "`..`"),
        ("elsewhere/x.html", "projects/, areas/"),
        ("", "projects/, areas/"),
        ("archive", "projects/, areas/"),
    ],
)
def test_bad_paths_name_their_rule(path: str, words: str) -> None:
    problem = path_problem(path)
    assert problem is not None and words in problem


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_a_path_that_passes_is_in_a_bucket_and_clean(path: str) -> None:
    if path_problem(path) is not None:
        return
    normalized = normalize_path(path)
    assert para_of(normalized) is not None
    assert ".." not in normalized.split("/")
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F or c == "\\" for c in path)
