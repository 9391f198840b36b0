"""Properties the format states as invariants, checked on generated input (hypothesis)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.memory import FRAGMENTS, memory_html

from headd.errors import InvalidMemory
from headd.memfile.parse import parse_memory
from headd.memfile.text import JS_SPACE_CHARS, chunk_text, utf16_len
from headd.record import MemoryRecord

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse_or_refuse(html: str | bytes) -> MemoryRecord | None:
    try:
        return parse_memory("areas/prop.html", html)
    except InvalidMemory as exc:
        assert exc.violations, "a refusal names at least one reason"
        assert not any(v.startswith("unparseable") for v in exc.violations), exc.violations
        return None


@SETTINGS
@given(st.text(max_size=400))
def test_any_text_parses_or_is_refused(text: str) -> None:
    _parse_or_refuse(text)


@SETTINGS
@given(st.binary(max_size=400))
def test_any_bytes_parse_or_are_refused(data: bytes) -> None:
    _parse_or_refuse(data)


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_any_markup_in_a_valid_frame_parses_or_is_refused(pieces: list[str]) -> None:
    html = memory_html(
        article="<p><mark>Claim " + "".join(pieces[:3]) + "</mark> " + "".join(pieces)
    )
    record = _parse_or_refuse(html)
    if record is not None:
        assert record.content_hash.startswith("sha256:") and len(record.content_hash) == 71
        assert all(chunk.char_count <= 1800 for chunk in record.chunks)


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_line_endings_and_head_edits_never_move_the_content_hash(pieces: list[str]) -> None:
    """CRLF is the parser's business and the head is outside the hash: both leave it alone."""
    article = "<p><mark>Claim.</mark> " + "".join(pieces)
    base = _parse_or_refuse(memory_html(article=article))
    if base is None:
        return
    # Every bare LF becomes CRLF (an LF already after a CR is part of a CRLF and stays).
    crlf_text = re.sub(r"(?<!\r)\n", "\r\n", memory_html(article=article))
    crlf = parse_memory("areas/prop.html", crlf_text)
    edited = parse_memory(
        "areas/prop.html",
        memory_html(
            article=article,
            title="Another title",
            metas={"memhtml-importance": "9", "memhtml-tag": "t"},
            extra_head='<link rel="memhtml-supports" href="/areas/z.html">',
        ),
    )
    assert crlf.content_hash == base.content_hash == edited.content_hash
    assert crlf.body_text == base.body_text and crlf.claim == base.claim
    assert len({base.blob_sha, crlf.blob_sha, edited.blob_sha}) == 3 or base.html == crlf.html


_JS_SPACE = re.compile("[" + re.escape(JS_SPACE_CHARS) + "]")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab🚀 .!?\u00a0", min_size=1, max_size=60),
            st.just("x" * 700),
            st.just("🚀" * 500),
        ),
        max_size=12,
    ),
    st.integers(min_value=20, max_value=1800),
)
def test_chunks_lose_no_text_and_respect_the_ceiling(parts: list[str], ceiling: int) -> None:
    text = " ".join(parts)
    chunks = chunk_text(text, ceiling)
    for piece, count in chunks:
        assert count == utf16_len(piece) <= ceiling
    joined = "".join(piece for piece, _ in chunks)
    # A hard cut inside a surrogate pair becomes U+FFFD on both sides (memhtml's stored rows).
    expected = _JS_SPACE.sub("", text)
    got = _JS_SPACE.sub("", joined)
    if "\ufffd" not in got:
        assert got == expected
    else:
        assert len(got.encode("utf-16-le")) == len(expected.encode("utf-16-le"))


@pytest.mark.parametrize("ceiling", [2, 3, 4])
def test_a_hard_cut_inside_a_pair_is_two_replacement_characters(ceiling: int) -> None:
    chunks = chunk_text("🚀" * 3, ceiling)
    assert sum(count for _, count in chunks) == 6
    assert all(count <= ceiling for _, count in chunks)
