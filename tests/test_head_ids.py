"""The path id table: ``intern_many`` numbers paths exactly as ``intern`` one by one does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headd.head.ids import PathIds, utf16_key

PATHS = st.lists(st.sampled_from(["a.html", "b/c.html", "é.html", "\U0001f600.html", "z.html"]))


@given(known=PATHS, batch=PATHS)
def test_property_intern_many_numbers_paths_as_intern_does(
    known: list[str], batch: list[str]
) -> None:
    one_by_one, at_once = PathIds(), PathIds()
    for path in known:
        one_by_one.intern(path)
        at_once.intern(path)
    expected = [one_by_one.intern(path) for path in batch]
    assert at_once.intern_many(batch) == expected
    assert len(at_once) == len(one_by_one)
    for ident in range(len(one_by_one)):
        assert at_once.path(ident) == one_by_one.path(ident)
        assert at_once.key(ident) == utf16_key(one_by_one.path(ident))
