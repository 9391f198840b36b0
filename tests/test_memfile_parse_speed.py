"""The parser's fast paths give exactly what the plain rules give.

The speed work replaced general code with shortcuts for the common case: the article's canonical
text is built from the one walk's segments (not a fresh tree walk), whitespace is collapsed and
counted with string scans instead of regexes, sentences are cut with ``str.split``, head metas and
links skip the open-element stack, harmless attributes skip the presentation check, and the pool
is used only where it can pay. Each test here pits a shortcut against the plain statement of its
rule (a regex written from JavaScript's semantics, a fresh tree walk, ``calendar``), on generated
input. The memo of recent texts is checked to answer only for the very text object it parsed.

Mutation notes (each applied once, the named tests seen red, then reverted):
- ``parse_memory`` never asking its memo -> ``test_the_same_text_object_at_the_same_path…`` and
  ``test_the_memo_holds_a_bounded_number_of_texts`` (and, in ``test_store_validate.py``,
  ``test_an_applied_put_is_parsed_once``).
"""

from __future__ import annotations

import calendar
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser
from support.memory import FRAGMENTS, memory_html

from headd.errors import InvalidMemory
from headd.head import parallel_parse
from headd.memfile import parse as parse_mod
from headd.memfile import text as tx
from headd.memfile.constraints import is_root_relative
from headd.memfile.hashes import FRAME_PATTERN, digest_of, frame_key_of
from headd.memfile.parse import js_number, parse_memory
from headd.memfile.vocabulary import REL_CLASS, rel_of_token, rel_token_of
from headd.paths import normalize_path

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_JS_RUN = re.compile("[" + re.escape(tx.JS_SPACE_CHARS) + "]+")
_ASCII_RUN = re.compile("[ \t\n\f\r]+")
_SENTENCE_BREAK = re.compile("(?<=[.!?])[" + re.escape(tx.JS_SPACE_CHARS) + "]+")

#: Every kind of whitespace the rules tell apart: HTML's, JavaScript's, Python's alone.
_SPACY = "ab.!? \t\n\v\f\r\x1c\x1f\x85\u00a0\u2000\u200a\u2028\u3000\ufeff🚀"
#: The same, ASCII only (ASCII text takes its own shortcuts).
_ASCII_SPACY = "ab.!? \t\n\v\f\r\x1c\x1f"


def _js_word_count(text: str) -> int:
    """``text.trim() === "" ? 0 : text.trim().split(/\\s+/).length``."""
    trimmed = text.strip(tx.JS_SPACE_CHARS)
    return 0 if trimmed == "" else len(_JS_RUN.split(trimmed))


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_the_hash_and_body_from_the_walk_equal_a_fresh_tree_walk(pieces: list[str]) -> None:
    """The segment-built canonical text is the one ``canonical_text`` reads off the tree."""
    html = memory_html(
        article="<p><mark>Claim " + "".join(pieces[:3]) + "</mark> " + "".join(pieces)
    )
    try:
        record = parse_memory("areas/speed.html", html)
    except InvalidMemory:
        return
    article = LexborHTMLParser(html).css_first("article")
    assert article is not None
    canonical = tx.canonical_text(article)
    assert record.content_hash == digest_of(canonical)
    assert record.body_text == tx.collapse_ascii(canonical)
    assert record.word_count == _js_word_count(record.body_text)


@pytest.mark.parametrize(
    "article",
    [
        "<p><mark>A claim.</mark></p><pre>\n  kept   as\n\tis </pre><p>x  y</p>",
        "<pre><p><mark>Inside a pre.</mark></p></pre>",
        "<p><mark>Claim.</mark></p><pre>a<pre>b  c</pre>  d</pre>",
        "<p><mark>Claim.</mark></p><textarea><pre>  not a pre  </pre></textarea>",
    ],
)
def test_pre_text_in_the_article_hashes_as_a_fresh_tree_walk(article: str) -> None:
    html = memory_html(article=article)
    record = parse_memory("areas/speed.html", html)
    node = LexborHTMLParser(html).css_first("article")
    assert node is not None
    if "textarea" not in article:  # a tree walk sees Lexbor's phantom <pre>; the parser does not
        assert record.content_hash == digest_of(tx.canonical_text(node))
    assert record.body_text == tx.collapse_ascii(record.body_text)


@SETTINGS
@given(st.text(alphabet=_SPACY, max_size=120) | st.text(alphabet=_ASCII_SPACY, max_size=60))
def test_whitespace_shortcuts_match_the_regex_rules(text: str) -> None:
    collapsed = tx.collapse_ascii(text)
    assert collapsed == _ASCII_RUN.sub(" ", text).strip(tx.JS_SPACE_CHARS)
    assert tx.collapse_js(text) == _JS_RUN.sub(" ", text).strip(" ")
    assert tx.word_count_of(text) == _js_word_count(text)
    assert tx.word_count_of(collapsed, collapsed=True) == _js_word_count(collapsed)


@SETTINGS
@given(st.text(alphabet=_SPACY, max_size=200) | st.text(alphabet="ab.!? é", max_size=200))
def test_sentence_cuts_match_the_lookbehind_regex(text: str) -> None:
    assert tx._sentence_split(text) == _SENTENCE_BREAK.split(text)
    single = re.sub(" +", " ", text)  # also the common shape: single spaces only
    assert tx._sentence_split(single) == _SENTENCE_BREAK.split(single)


def _chunks_by_the_rule(text: str, max_chars: int) -> list[tuple[str, int]]:
    """The chunk rule as stated: regex sentences, hard cuts, greedy packing (BMP text)."""
    trimmed = text.strip(tx.JS_SPACE_CHARS)
    if len(trimmed) <= max_chars:
        return [(trimmed, len(trimmed))] if trimmed else []
    units: list[str] = []
    for sentence in _SENTENCE_BREAK.split(trimmed):
        piece = sentence.strip(tx.JS_SPACE_CHARS)
        while len(piece) > max_chars:
            units.append(piece[:max_chars])
            piece = piece[max_chars:]
        if piece:
            units.append(piece)
    chunks: list[str] = []
    for unit in units:
        if chunks and len(chunks[-1]) + 1 + len(unit) <= max_chars:
            chunks[-1] += " " + unit
        else:
            chunks.append(unit)
    return [(chunk, len(chunk)) for chunk in chunks]


@SETTINGS
@given(
    st.text(alphabet="ab.!? é", max_size=300) | st.text(alphabet="ab.!?  \t\u00a0", max_size=300),
    st.integers(min_value=1, max_value=40),
)
def test_single_spaced_chunks_are_the_packed_sentences(text: str, max_chars: int) -> None:
    """The slice-based chunker (single-spaced text) packs exactly the rule's units."""
    single = re.sub(" +", " ", text)
    assert tx.chunk_text(single, max_chars) == _chunks_by_the_rule(single, max_chars)
    assert tx.chunk_text(text, max_chars) == _chunks_by_the_rule(text, max_chars)


@pytest.mark.parametrize(
    "article",
    [
        "<p><mark>a <code>x </code>\n<b>b</b></mark></p>",
        "<p><mark>a<pre>x</pre>\n b</mark></p>",
        "<p><mark>a <code><p>x</p></code> <i>b</i></mark></p>",
        "<p><mark>a </mark>\n <b> </b><dl><dt> k </dt>\n<dd> <i>v</i> </dd></dl></p>",
        "<pre> \n</pre>\n<p><mark>\n c </mark></p><pre>\n\n  d </pre>",
    ],
)
def test_dropped_whitespace_segments_change_no_text(article: str) -> None:
    """The walk writes a run of collapsible whitespace once; the gist (which skips <pre> and
    <code>), the facets and the hash read what a fresh tree walk reads."""
    html = memory_html(article=article)
    try:
        record = parse_memory("areas/speed.html", html)
    except InvalidMemory:
        return
    node = LexborHTMLParser(html).css_first("article")
    assert node is not None
    assert record.content_hash == digest_of(tx.canonical_text(node))
    mark = node.css_first("mark")
    assert mark is not None
    assert record.claim == tx.gist_text(mark)


@pytest.mark.parametrize("year", [100, 1900, 2000, 2023, 2024, 2100, 2400, 9999])
def test_calendar_dates_match_the_calendar_module(year: int) -> None:
    for month in range(0, 14):
        for day in range(0, 33):
            value = f"{year:04d}-{month:02d}-{day:02d}"
            expected = 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]
            assert tx.is_valid_datetime(value) is expected, value


@SETTINGS
@given(st.text(alphabet="/.a?#", max_size=12))
def test_root_relative_matches_the_regex_rule(href: str) -> None:
    path = re.split(r"[?#]", href, maxsplit=1)[0]
    expected = (
        href.startswith("/")
        and not href.startswith("//")
        and all(segment not in ("", ".", "..") for segment in path[1:].split("/"))
    )
    assert is_root_relative(href) is expected
    assert is_root_relative(href) is expected  # the second answer comes from the memo


@SETTINGS
@given(st.text(alphabet="/a.", max_size=12))
def test_path_normalization_matches_the_regex_rule(path: str) -> None:
    collapsed = re.sub("/{2,}", "/", re.sub("^/+", "", path))
    assert normalize_path(path) == (collapsed[:-1] if collapsed.endswith("/") else collapsed)


def test_head_shortcuts_still_apply_every_head_rule() -> None:
    """Metas and links skip the element stack and harmless attributes skip the presentation
    check: a forbidden attribute or a handler on them is still refused, in document order."""
    html = memory_html(
        extra_head=(
            '<meta name="memhtml-tag" content="t" STYLE="x">'
            '<link rel="memhtml-supports" href="/areas/b.html" onload="x">'
            '<link rel="memhtml-nope" href="areas/c.html">'
        )
    )
    with pytest.raises(InvalidMemory) as caught:
        parse_memory("areas/speed.html", html)
    assert caught.value.violations == (
        "style attribute on <meta>: presentation is not memory",
        "onload handler on <link>: a memory file does not execute",
        '<link rel="memhtml-nope"> is outside the closed edge vocabulary',
        '<link rel="memhtml-nope" href="areas/c.html"> is not repo-root-relative',
    )


def test_a_bad_language_token_on_a_harmless_attribute_set_still_warns() -> None:
    html = memory_html(article='<p><mark>Claim.</mark> <code data-lang="a b">x</code></p>')
    record = parse_memory("areas/speed.html", html)
    assert record.warnings == ('data-lang="a b" is not a language token',)
    assert [(row.entity_type, row.entity_name) for row in record.entity_rows] == [("lang", "a b")]


def test_entity_rows_from_the_deduplicated_metas_are_the_rule_s_rows() -> None:
    """The rows are built from the trimmed, deduplicated entity metas: what the rule gives."""
    entities = [" person:ada ", "person:ada", "", "x:", ":y", "a:b:c", "\u00a0", "plain", "a:b:c"]
    head = "".join(f'<meta name="memhtml-entity" content="{e}">' for e in entities)
    article = "<p><mark>Claim.</mark> <dfn> ada </dfn><dfn>ada</dfn><code data-lang=PY>x</code></p>"
    record = parse_memory("areas/speed.html", memory_html(article=article, extra_head=head))
    rows = [(row.entity_type, row.entity_name) for row in record.entity_rows]
    assert rows == tx.entity_rows_of(entities, ["ada", "ada"], ["py"])
    assert record.entities == ("person:ada", "x:", ":y", "a:b:c", "plain")


_FRAME = re.compile(FRAME_PATTERN, re.ASCII | re.DOTALL)
_JS_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.ASCII)


def _frame_key_by_the_regex(claim: str) -> str | None:
    """The frame rule as stated: the slot regex over the JavaScript-collapsed claim."""
    match = _FRAME.fullmatch(_JS_RUN.sub(" ", claim).strip(" "))
    if match is None:
        return None
    frame, value = match.group(1), match.group(2)
    if len(frame.split(" ")) < 3 or len(value.split(" ")) > 6:
        return None
    return frame.lower()


_FRAME_WORDS = ["of", "is", "in", "to", "by", "as", "Of", "IS", "proof", "x", "_", "9", "é", "."]


@SETTINGS
@given(st.lists(st.sampled_from([*_FRAME_WORDS, " ", "  ", "\t", "\u00a0", "\v"]), max_size=16))
def test_the_frame_key_is_the_slot_regex(pieces: list[str]) -> None:
    """``frame_key_of`` finds the last linking word with ``rfind``; the regex is the rule."""
    claim = "".join(pieces)
    assert frame_key_of(claim) == _frame_key_by_the_regex(claim)
    collapsed = tx.collapse_ascii(claim)
    assert frame_key_of(collapsed, collapsed=True) == _frame_key_by_the_regex(collapsed)


@SETTINGS
@given(st.text(alphabet=_SPACY, max_size=120) | st.text(alphabet="ab.!? é🚀", max_size=4000))
def test_words_and_chunks_share_one_scan_and_change_nothing(text: str) -> None:
    body = tx.collapse_ascii(text)
    assert tx.words_and_chunks_of(body) == (
        tx.word_count_of(body, collapsed=True),
        tx.chunk_text(body),
    )


@SETTINGS
@given(st.text(alphabet="0123456789.+-eE xXI", max_size=8))
def test_the_decimal_shortcut_of_js_number_is_the_grammar(raw: str) -> None:
    """Digits with at most one point take ``float()`` directly; the grammar agrees."""
    value = js_number(raw)
    text = raw.strip(tx.JS_SPACE_CHARS)
    if text == "":
        assert value == 0.0
    elif _JS_DECIMAL.fullmatch(text):
        assert value == float(text)
    elif text.endswith("Infinity") or text.startswith("0"):
        return  # Infinity and the radix forms: the general path, tested in the rules
    else:
        assert value != value  # NaN


@pytest.mark.parametrize(
    ("candidates", "cpus", "expected"),
    [(10_000, 1, 1), (10_000, 2, 2), (10_000, 3, 3), (10_000, 8, 4), (100, 8, 1)],
)
def test_the_pool_is_used_only_where_it_can_pay(
    candidates: int, cpus: int, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel_parse, "usable_cores", lambda: cpus)
    assert parallel_parse.default_workers(candidates) == expected


@pytest.mark.parametrize("entity", ["person:ada", "x:", ":y", "a:b:c", "plain", "\u00e9:\u00e9 x"])
def test_one_entity_meta_gives_the_rule_s_row(entity: str) -> None:
    """The one-entity shortcut (no dfn, no code language) builds the row the rule builds."""
    head = f'<meta name="memhtml-entity" content=" {entity} ">'
    record = parse_memory(
        "areas/speed.html", memory_html(article="<p><mark>Claim.</mark></p>", extra_head=head)
    )
    rows = [(row.entity_type, row.entity_name) for row in record.entity_rows]
    assert rows == tx.entity_rows_of([entity], [], [])


def test_remembered_meta_numbers_are_the_computed_ones() -> None:
    """``_bounded`` answers from its memo exactly what it computes, for every bound it is given."""
    bounds = [(0, 1, False), (1, 10, True), (0, 2**53 - 1, True)]
    for raw in ["0.90", " 0.9 ", "", "1e0", "0x1", "NaN", "5", "5.5", "-0", "Infinity", "\u00a0"]:
        for low, high, integral in bounds:
            computed = parse_mod._bounded.__wrapped__(raw, low, high, integral)
            assert parse_mod._bounded(raw, low, high, integral) == computed  # first: computed
            assert parse_mod._bounded(raw, low, high, integral) == computed  # then: remembered


def test_remembered_datetime_answers_are_the_rule_s() -> None:
    """``is_valid_datetime`` answers from its memo exactly what the rule computes."""
    stamps = ["2026-11-30T09:00:00Z", "2024-02-29", "2023-02-29", "0099-01-01", "2026-13-01", ""]
    for stamp in stamps:
        expected = tx.is_valid_datetime.__wrapped__(stamp)
        assert tx.is_valid_datetime(stamp) is expected  # first: computed
        assert tx.is_valid_datetime(stamp) is expected  # then: remembered


def test_canonical_rel_tokens_read_as_the_rule_reads_them() -> None:
    """The token table answers what the prefix-and-hyphen rule answers, for every rel."""
    for rel in REL_CLASS:
        for token in (rel_token_of(rel), "memhtml-" + rel, "memhtml-" + rel.upper(), rel):
            by_rule = token[len("memhtml-") :].replace("-", "_")
            expected = by_rule if token.startswith("memhtml-") and by_rule in REL_CLASS else None
            assert rel_of_token(token) == expected


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the parser really parses (past the memo of recent texts), in order."""
    parsed: list[str] = []
    real = parse_mod._parse

    def counted(path: str, text: str, raw: bytes) -> Any:
        parsed.append(path)
        return real(path, text, raw)

    monkeypatch.setattr(parse_mod, "_parse", counted)
    return parsed


def test_the_same_text_object_at_the_same_path_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = _counting_parses(monkeypatch)
    html = memory_html("Memo", "The memo keeps the record of a text it parsed.")
    first = parse_memory("areas/a/memo.html", html)
    assert parse_memory("areas/a/memo.html", html) is first
    assert parsed == ["areas/a/memo.html"]
    # an equal text in another object, another path, bytes: each parsed afresh, same record
    twin = "".join(list(html))
    assert twin == html and twin is not html
    assert parse_memory("areas/a/memo.html", twin) == first
    assert parse_memory("areas/b/memo.html", html).path == "areas/b/memo.html"
    assert parse_memory("areas/a/memo.html", html.encode()) == first
    assert parsed == [
        "areas/a/memo.html",
        "areas/a/memo.html",
        "areas/b/memo.html",
        "areas/a/memo.html",
    ]


def test_a_refused_text_is_refused_again_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _counting_parses(monkeypatch)
    bad = "<!doctype html><html><head></head><body></body></html>"
    for _ in range(2):
        with pytest.raises(InvalidMemory):
            parse_memory("areas/a/bad.html", bad)
    assert parsed == ["areas/a/bad.html", "areas/a/bad.html"]


def test_the_memo_holds_a_bounded_number_of_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _counting_parses(monkeypatch)
    texts = [memory_html(f"Memo {n}", f"Fact {n} is kept.") for n in range(100)]
    for text in texts:
        parse_memory("areas/a/m.html", text)
    assert len(parse_mod._recent._records) == parse_mod._RecentParses.SIZE
    parse_memory("areas/a/m.html", texts[0])  # the oldest went first
    parse_memory("areas/a/m.html", texts[-1])  # the newest is still there
    assert len(parsed) == 101
