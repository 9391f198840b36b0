"""The names git keeps for itself, in every spelling, refused wherever a path comes from others.

Guards seen failing when broken: ``folded`` without the HFS+ code points, the NTFS trailing
dots or the case fold -> the matching rows of ``test_every_spelling_of_dotgit_is_recognised``
and the property; ``path_problem`` without its ``.git`` rule -> a request could name
``areas/.GIT/hooks/x.html``, which the work tree write would put in a nested git directory.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headd.git_names import is_git_name
from headd.paths import path_problem


@pytest.mark.parametrize(
    ("name", "special", "taken"),
    [
        (".git", ".git", True),
        (".GiT", ".git", True),
        (".git ", ".git", True),
        (".git. . ", ".git", True),
        (".git::$INDEX_ALLOCATION", ".git", True),
        ("GIT~1", ".git", True),
        (".\u200dg\u200eit\ufeff", ".git", True),
        (".gitx", ".git", False),
        ("git", ".git", False),
        (".GITMODULES", ".gitmodules", True),
        ("gi7eba~1", ".gitmodules", True),
    ],
)
def test_every_spelling_of_dotgit_is_recognised(name: str, special: str, taken: bool) -> None:
    assert is_git_name(name, special) is taken


_IGNORED = st.sampled_from(["\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u206f", "\ufeff"])


@st.composite
def dotgit_spellings(draw: st.DrawFn) -> str:
    """``.git`` in some case, HFS+ ignorables anywhere, NTFS's trailing dots and spaces."""
    out = ""
    for ch in ".git":
        out += "".join(draw(st.lists(_IGNORED, max_size=2)))
        out += ch.upper() if draw(st.booleans()) else ch
    out += "".join(draw(st.lists(st.sampled_from([" ", "."]), max_size=3)))
    return out


@given(dotgit_spellings())
def test_every_generated_spelling_of_dotgit_is_taken_for_it(name: str) -> None:
    assert is_git_name(name)
    assert path_problem(f"areas/{name}/hooks/x.html") is not None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
def test_a_name_without_git_in_it_is_never_taken_for_it(name: str) -> None:
    if "git" not in name.casefold() and "gi7eba" not in name.casefold():
        assert not is_git_name(name)


@pytest.mark.parametrize(
    "path", ["areas/.GIT/x.html", "areas/x/.git./y.html", "projects/git~1/a.html"]
)
def test_a_request_may_not_name_a_path_through_dotgit(path: str) -> None:
    assert path_problem(path) == "a path may not hold a component a file system takes for `.git`"


def test_names_near_dotgit_stay_allowed() -> None:
    assert path_problem("areas/.github/x.html") is None
    assert path_problem("areas/git/x.html") is None
