"""Slugs, placement and collision suffixes: memhtml's rules, checked on every path it chose."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.writer_vectors import WriteVector, cached_write_vectors

from headd.errors import InvalidMemory, WriteConflict
from headd.memfile.placement import (
    SLUG_MAX_LENGTH,
    choose_path,
    is_valid_memory_path,
    place,
    placement_dir,
    slugify,
    with_collision_ordinal,
)
from headd.paths import normalize_path


@pytest.fixture
def writer_vectors(anchor_store: Path) -> tuple[WriteVector, ...]:
    return cached_write_vectors(anchor_store)


NOW = datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Checkout API timeout", "checkout-api-timeout"),
        ("Déployé à Zürich", "deploye-a-zurich"),
        ("  --Hello, World!--  ", "hello-world"),
        ("日本語", "untitled"),
        ("!!!", "untitled"),
        ("ﬁle Ⅳ", "file-iv"),  # NFKD folds compatibility forms
        ("Pool ceiling (final)", "pool-ceiling-final"),
        ("a" * 79 + " b", "a" * 79),  # cut to 80 exposes a hyphen, which is trimmed
    ],
)
def test_slugify(title: str, slug: str) -> None:
    assert slugify(title) == slug


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=120))
def test_slugs_are_valid_and_idempotent(title: str) -> None:
    slug = slugify(title)
    assert 0 < len(slug) <= SLUG_MAX_LENGTH
    assert slug == slug.strip("-") and "--" not in slug
    assert set(slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert slugify(slug) == slug


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=120), st.integers(min_value=1, max_value=1000))
def test_collision_suffixes_stay_inside_the_budget(title: str, ordinal: int) -> None:
    name = with_collision_ordinal(slugify(title), ordinal)
    assert len(name) <= SLUG_MAX_LENGTH
    if ordinal > 1:
        assert name.endswith(f"-{ordinal}")


def test_a_long_title_is_shortened_for_its_suffix() -> None:
    long = "x" * 80
    assert with_collision_ordinal(long, 2) == "x" * 78 + "-2"
    assert with_collision_ordinal(long, 1000) == "x" * 75 + "-1000"


@pytest.mark.parametrize(
    ("path", "normalized", "valid"),
    [
        ("/areas/handbook//leading-slash.html", "areas/handbook/leading-slash.html", True),
        ("resources/x.html/", "resources/x.html", True),
        ("notes/ignored.html", "notes/ignored.html", False),
        ("areas/handbook/page.md", "areas/handbook/page.md", False),
        ("areas/../escape.html", "areas/../escape.html", False),
        ("areas/./x.html", "areas/./x.html", False),
        ("areas.html", "areas.html", False),
        ("archive/2026/areas/x.html", "archive/2026/areas/x.html", True),
    ],
)
def test_path_usability(path: str, normalized: str, valid: bool) -> None:
    assert normalize_path(path) == normalized
    assert is_valid_memory_path(path) is valid


@pytest.mark.parametrize(
    ("memory_type", "kwargs", "directory"),
    [
        ("arc", {"workspace": "w", "tags": ["t"]}, "areas/arcs"),
        ("task", {"workspace": "Search Platform"}, "projects/search-platform/tasks"),
        ("task", {"entities": ["person:x"]}, "areas/inbox/tasks"),
        ("semantic", {"entities": ["person:amara"], "workspace": "w"}, "resources/people"),
        ("episodic", {"entities": ["person:amara"]}, "areas/inbox"),
        ("semantic", {"entities": ["person:   ", "person:"], "tags": ["e"]}, "resources/e"),
        ("procedural", {"workspace": "Équipe Données", "tags": ["t"]}, "projects/equipe-donnees"),
        ("precedent", {"tags": [" ", "Policy Docs"]}, "resources/policy-docs"),
        ("agent_insight", {"tags": ["t"]}, "areas/inbox"),
        ("semantic", {"workspace": ""}, "areas/inbox"),
    ],
)
def test_placement_rules_in_order(memory_type: str, kwargs: dict, directory: str) -> None:
    assert placement_dir(memory_type, **kwargs) == directory


def test_episodic_names_carry_the_utc_date() -> None:
    from datetime import timedelta, timezone

    late = datetime(2026, 12, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))  # 22:30 UTC Nov 30
    path = choose_path(title="Pager storm", memory_type="episodic", taken=set(), now=late)
    assert path == "areas/inbox/20261130-pager-storm.html"


def test_collisions_take_the_first_free_suffix() -> None:
    taken = {"areas/inbox/tasks/water.html", "areas/inbox/tasks/water-2.html"}
    assert (
        choose_path(title="Water", memory_type="task", taken=taken, now=NOW)
        == "areas/inbox/tasks/water-3.html"
    )


def test_an_occupied_explicit_path_is_refused_without_suffix() -> None:
    with pytest.raises(WriteConflict) as err:
        choose_path(
            title="x",
            memory_type="semantic",
            taken={"areas/a.html"},
            now=NOW,
            path="/areas//a.html",
        )
    assert err.value.code == "ERR_WRITE_CONFLICT"
    assert err.value.details == {"path": "areas/a.html"}


def test_an_unusable_explicit_path_is_ignored_or_refused_when_strict() -> None:
    kwargs = {"title": "Strict", "memory_type": "semantic", "taken": set(), "now": NOW}
    assert choose_path(**kwargs, path="nowhere/strict.html") == "areas/inbox/strict.html"  # type: ignore[arg-type]
    with pytest.raises(InvalidMemory) as err:
        choose_path(**kwargs, path="nowhere/strict.html", strict_path=True)  # type: ignore[arg-type]
    assert "not rooted in a PARA bucket" in err.value.violations[0]


@settings(max_examples=80, deadline=None)
@given(
    title=st.text(max_size=40),
    memory_type=st.sampled_from(["semantic", "episodic", "task", "arc", "procedural"]),
    taken_ordinals=st.sets(st.integers(min_value=1, max_value=6), max_size=6),
)
def test_chosen_paths_are_free_usable_and_in_budget(
    title: str, memory_type: str, taken_ordinals: set[int]
) -> None:
    first = choose_path(title=title, memory_type=memory_type, taken=set(), now=NOW)
    directory, name = first.rsplit("/", 1)
    stem = name.removesuffix(".html")
    prefix = stem[:9] if memory_type == "episodic" else ""
    slug = stem[len(prefix) :]
    taken = {f"{directory}/{prefix}{with_collision_ordinal(slug, n)}.html" for n in taken_ordinals}
    path = choose_path(title=title, memory_type=memory_type, taken=taken, now=NOW)
    assert path not in taken and is_valid_memory_path(path)
    assert len(path.rsplit("/", 1)[1].removesuffix(".html")) - len(prefix) <= SLUG_MAX_LENGTH
    free = min(n for n in range(1, 8) if n not in taken_ordinals)
    assert path == f"{directory}/{prefix}{with_collision_ordinal(slug, free)}.html"


# ---------------------------------------------------------------------------------------------
# every path the tool chose in the build log


def test_every_path_the_tool_chose_is_reproduced(writer_vectors: tuple[WriteVector, ...]) -> None:
    vectors = writer_vectors
    from support.writer_vectors import instant

    assert len(vectors) == 228
    wrong = []
    for v in vectors:
        chosen = place(
            v.fields,
            v.taken,
            instant(v.fields.created),
            path=v.explicit_path,
            strict_path=v.strict_path,
        )
        if chosen != v.path:
            wrong.append((v.label, chosen, v.path))
    assert wrong == []
    suffixed = [v.path for v in vectors if v.path.removesuffix(".html").endswith(("-2", "-3"))]
    assert len(suffixed) >= 3  # the ladder is exercised, not just the first choice


def test_the_build_logs_refused_paths_are_refused(writer_vectors: tuple[WriteVector, ...]) -> None:
    """apply #125 / write seq 12: occupied explicit path; #124 / seq 13: strict unusable path."""
    vectors = writer_vectors
    from support.writer_vectors import instant

    explicit = next(
        v for v in vectors if v.explicit_path == "resources/runbooks/explicit-name.html"
    )
    later = explicit.taken | {explicit.path}
    with pytest.raises(WriteConflict):
        choose_path(
            title="Occupied explicit path",
            memory_type="semantic",
            taken=later,
            now=instant(explicit.fields.created),
            path="resources/runbooks/explicit-name.html",
        )
    with pytest.raises(InvalidMemory):
        choose_path(
            title="Strict path refusal",
            memory_type="semantic",
            taken=set(),
            now=NOW,
            path="notes/strict.html",
            strict_path=True,
        )
