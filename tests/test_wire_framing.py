"""The line framer: whole lines whatever the chunking, and a hard per-line limit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.wire.framing import LineFramer, Oversized, frame

line_bytes = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b""))


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(line_bytes, max_size=20), cuts=st.lists(st.integers(0, 2000), max_size=30))
def test_any_chunking_yields_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(frame(line) for line in lines)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    framer = LineFramer(limit=64)
    got: list[bytes | Oversized] = []
    for start, end in zip(points, points[1:], strict=False):
        got += framer.feed(stream[start:end])
    assert got == lines
    assert framer.pending == 0


@settings(max_examples=100, deadline=None)
@given(size=st.integers(1, 200), limit=st.integers(1, 100), chunk=st.integers(1, 50))
def test_a_line_is_oversized_exactly_when_longer_than_the_limit(
    size: int, limit: int, chunk: int
) -> None:
    stream = b"x" * size + b"\n" + b"y\n"
    framer = LineFramer(limit=limit)
    got: list[bytes | Oversized] = []
    for i in range(0, len(stream), chunk):
        got += framer.feed(stream[i : i + chunk])
    if size <= limit:
        assert got == [b"x" * size, b"y"]
    else:
        assert got == [Oversized(limit)], "an overrun ends the stream: nothing after it is framed"
        assert framer.closed


def test_overrun_is_reported_before_the_newline_arrives() -> None:
    framer = LineFramer(limit=10)
    assert framer.feed(b"0123456789") == []
    assert framer.feed(b"a") == [Oversized(10)]
    assert framer.feed(b"\nmore\n") == []


def test_lines_before_an_overrun_in_the_same_chunk_are_kept() -> None:
    framer = LineFramer(limit=4)
    assert framer.feed(b"ab\ncdefgh\n") == [b"ab", Oversized(4)]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineFramer(limit=0)
