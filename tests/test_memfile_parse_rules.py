"""The parser's rules, one at a time: constraints, head rules, extraction, odd inputs."""

from __future__ import annotations

import time

import pytest
from support.memory import memory_html

from headd.errors import InvalidMemory
from headd.memfile.constraints import is_valid_datetime
from headd.memfile.hashes import blob_sha_of
from headd.memfile.parse import check_memory, js_number, parse_memory
from headd.record import Citation, EntityRow, Facet, Link


def refused(html: str | bytes, path: str = "areas/x.html") -> list[str]:
    with pytest.raises(InvalidMemory) as caught:
        parse_memory(path, html)
    return list(caught.value.violations)


# --- valid files ------------------------------------------------------------------------------


def test_a_minimal_file_fills_every_field() -> None:
    html = memory_html(
        article="<p><mark>The deploy window is Tuesday.</mark> Ops agreed "
        '<time datetime="2026-11-02">last week</time>.</p>\n'
        '<dl><dt>team</dt><dd>ops</dd><dd><data value="3">three</data> people</dd></dl>\n'
        '<p>See <cite>the runbook</cite> and <q cite="https://x.test/a">ship it</q>; '
        '<dfn>window</dfn> <code data-lang=" TS ">x()</code>.</p>\n'
        "<details><summary>Why</summary><p>history</p></details><aside>not on holidays</aside>",
        title="Deploy  window",
        metas={
            "memhtml-entity": " service:deploy ",
            "memhtml-tag": "ops",
            "memhtml-confidence": "0.8",
            "memhtml-importance": "7",
        },
        extra_head='<link rel="memhtml-relates-to" href="/areas/y.html">',
    )
    record = parse_memory("projects/ship/notes/x.html", html)
    assert record.path == "projects/ship/notes/x.html"
    assert record.blob_sha == blob_sha_of(html)  # git's id of the exact text
    assert record.title == "Deploy window"
    assert record.claim == "The deploy window is Tuesday."
    assert record.event_at == "2026-11-02"
    assert record.workspace == "ship"
    assert record.para == "projects"
    assert not record.archived and record.origin_path is None
    assert record.confidence == 0.8 and record.importance == 7
    assert record.entities == ("service:deploy",)
    assert record.entity_rows == (
        EntityRow("service", "deploy"),
        EntityRow("concept", "window"),
        EntityRow("lang", "ts"),
    )
    assert record.tags == ("ops",)
    assert record.links == (Link(rel="relates_to", href="/areas/y.html"),)
    assert record.facets == (
        Facet("team", "ops", None),
        Facet("team", "three people", 3.0),
    )
    assert record.citations == (
        Citation("the runbook", None),
        Citation("ship it", "https://x.test/a"),
    )
    assert record.frame_key == "the deploy window is"
    assert record.disclosure_text.split("\n") == [
        "The deploy window is Tuesday.",
        "Why",
        "team: ops",
        "team: three people",
        "the runbook",
        "ship it",
    ]
    assert record.disclosure == record.disclosure_text  # more than the claim: stored
    assert "history" in record.body_text and "not on holidays" in record.body_text
    assert record.fts_text == "\n".join([record.title, record.claim, record.body_text])
    assert record.word_count == len(record.body_text.split())
    assert len(record.chunks) == 1 and record.chunks[0].text == record.body_text
    assert record.warnings == ('data-lang=" TS " is not a language token',)


def test_archive_follows_the_path_not_the_status() -> None:
    record = parse_memory("archive/2025/areas/hand/x.html", memory_html())
    assert record.archived and record.status == "active"
    assert record.origin_path == "areas/hand/x.html" and record.para == "archive"
    live = parse_memory("areas/x.html", memory_html(metas={"memhtml-status": "archived"}))
    assert not live.archived and live.status == "archived"


def test_self_links_and_duplicates_are_dropped_hrefs_kept_as_written() -> None:
    head = "\n".join(
        [
            '<link rel="memhtml-supports" href="/areas/x.html">',
            '<link rel="memhtml-laterally-related" href="/areas/y.html?v=1#a">',
            '<link rel="memhtml-laterally-related" href="/areas/y.html?v=1#a">',
            '<link rel="stylesheet" href="style.css">',
        ]
    )
    record = parse_memory("areas/x.html", memory_html(extra_head=head))
    assert record.links == (Link("laterally_related", "/areas/y.html?v=1#a"),)


def test_malformed_optional_metas_fall_back_to_defaults() -> None:
    for metas in (
        {"memhtml-confidence": "1.50", "memhtml-importance": "11"},
        {"memhtml-confidence": "", "memhtml-importance": " "},
        {"memhtml-confidence": "high", "memhtml-importance": "7.6"},
        {"memhtml-confidence": "Infinity", "memhtml-importance": "0"},
    ):
        record = parse_memory("areas/x.html", memory_html(metas=metas))
        assert (record.confidence, record.importance) == (1.0, 5), metas
    odd = parse_memory(
        "areas/x.html", memory_html(metas={"memhtml-importance": "0x7", "memhtml-confidence": ".5"})
    )
    assert (odd.importance, odd.confidence) == (7, 0.5)


def test_needs_revision_and_reprieves() -> None:
    record = parse_memory(
        "areas/x.html",
        memory_html(metas={"memhtml-needs-revision": "YES", "memhtml-reprieves": "3"}),
    )
    assert record.needs_revision and record.reprieves == 3
    other = parse_memory("areas/x.html", memory_html(metas={"memhtml-needs-revision": "no"}))
    assert not other.needs_revision and other.reprieves == 0


def test_task_fields() -> None:
    record = parse_memory(
        "areas/inbox/tasks/t.html",
        memory_html(
            metas={
                "memhtml-type": "task",
                "memhtml-task-status": "doing",
                "memhtml-due": "2026-12-01",
            }
        ),
    )
    assert (record.task_status, record.due) == ("doing", "2026-12-01")


def test_text_is_html5_parsed_crlf_bom_and_references() -> None:
    article = "<p><mark>Caf&eacute; &amp; bar&#x21;</mark></p>\n<pre>\n  keep  this\n</pre>"
    lf = parse_memory("areas/x.html", memory_html(article=article))
    crlf = parse_memory("areas/x.html", memory_html(article=article, newline="\r\n"))
    bom = parse_memory("areas/x.html", "\ufeff" + memory_html(article=article))
    bom_bytes = parse_memory("areas/x.html", ("\ufeff" + memory_html(article=article)).encode())
    assert lf.claim == "Café & bar!"
    for other in (crlf, bom, bom_bytes):
        assert other.content_hash == lf.content_hash
        assert other.body_text == lf.body_text
        assert other.blob_sha != lf.blob_sha
    assert (
        bom.blob_sha == bom_bytes.blob_sha == blob_sha_of("\ufeff" + memory_html(article=article))
    )


def test_pre_keeps_its_whitespace_in_the_hash_only() -> None:
    one = parse_memory(
        "areas/x.html", memory_html(article="<p><mark>A b.</mark></p><pre>\nx  y</pre>")
    )
    swallowed = parse_memory(
        "areas/x.html", memory_html(article="<p><mark>A b.</mark></p><pre>x  y</pre>")
    )
    spaced = parse_memory(
        "areas/x.html", memory_html(article="<p><mark>A b.</mark></p><pre>x y</pre>")
    )
    assert one.content_hash == swallowed.content_hash  # the newline after <pre> is the parser's
    assert one.content_hash != spaced.content_hash
    assert one.body_text == spaced.body_text == "A b. x y"


def test_nbsp_is_content_not_whitespace_in_the_hash() -> None:
    plain = parse_memory("areas/x.html", memory_html(article="<p><mark>A b.</mark></p>"))
    nbsp = parse_memory("areas/x.html", memory_html(article="<p><mark>A&nbsp;b.</mark></p>"))
    assert plain.content_hash != nbsp.content_hash
    assert nbsp.claim == "A\u00a0b."


def test_a_textarea_holds_text_only_as_the_html_standard_says() -> None:
    """Lexbor re-opens a closed <code> inside a <textarea>; parse5 (memhtml) does not."""
    record = parse_memory(
        "areas/x.html",
        memory_html(
            article="<ul><li><mark>Claim <h1><code>c</h1><textarea>t</textarea></mark></li></ul>"
        ),
    )
    assert record.claim == "Claim t"
    assert record.body_text == "Claim c t"
    assert "<textarea> is outside the closed vocabulary" in record.warnings


def test_blocks_separate_words_inline_elements_do_not() -> None:
    record = parse_memory(
        "areas/x.html",
        memory_html(
            article="<p><mark>Fast<strong>er</strong> now.</mark></p><ul><li>one</li><li>two</li></ul>"
        ),
    )
    assert record.body_text == "Faster now. one two"


# --- violations -------------------------------------------------------------------------------


def test_every_violation_is_collected_not_just_the_first() -> None:
    html = memory_html(
        article='<p class="x" onclick="y()"><mark>Claim.</mark> <time datetime="2026-08-24 13:00">then</time>'
        "<time>no attr</time></p><script>1</script>",
        metas={
            "memhtml-task-status": "doing",
            "memhtml-due": "soon",
            "memhtml-created": "yesterday",
            "memhtml-bogus": "1",
        },
        extra_head='<meta name="memhtml-status" content="active">'
        '<link rel="memhtml-relates-to" href="areas/y.html">'
        '<link rel="memhtml-nope" href="//host/x.html">',
    )
    assert refused(html) == [
        '<meta name="memhtml-status"> appears 2 times but is not repeatable',
        '<meta name="memhtml-bogus"> is outside the closed metadata vocabulary',
        '<time datetime="2026-08-24 13:00"> is not an ISO date or datetime',
        '<time> without datetime: "no attr"',
        "class attribute on <p>: presentation is not memory",
        "onclick handler on <p>: a memory file does not execute",
        "<script> is forbidden: a memory file does not execute or style",
        '<link rel="memhtml-relates-to" href="areas/y.html"> is not repo-root-relative',
        '<link rel="memhtml-nope"> is outside the closed edge vocabulary',
        '<link rel="memhtml-nope" href="//host/x.html"> is not repo-root-relative',
        '<meta name="memhtml-task-status"> on a semantic memory: only a task carries one',
        '<meta name="memhtml-due" content="soon"> is not an ISO date or datetime',
        '<meta name="memhtml-created" content="yesterday"> is not an ISO date or datetime',
    ]


@pytest.mark.parametrize(
    ("article", "expected"),
    [
        ("<p>No claim.</p>", ["no <mark>: the claim span is required"]),
        (
            "<p><mark>a</mark><mark>b</mark></p>",
            ["2 <mark> elements: exactly one span is the claim"],
        ),
        (
            "<p><mark><code>x --y</code></mark></p>",
            ["empty <mark>: the claim span must say something"],
        ),
        (
            "<p>Lead.</p><details><p><mark>Hidden.</mark></p></details>",
            ["<mark> inside <details>: the claim is never behind a fold"],
        ),
        (
            "<p>Lead.</p><p><mark>Late.</mark></p>",
            ["<mark> not in the first <p>: the claim must lead the article"],
        ),
        (
            "<section><mark>Loose.</mark></section>",
            ["<mark> outside any <p> or <li>: the claim must lead a paragraph or list item"],
        ),
        (
            "<aside><p><mark> </mark></p></aside>",
            [
                "empty <mark>: the claim span must say something",
                "<mark> inside <aside>: the claim is never a caveat",
            ],
        ),
    ],
)
def test_mark_rules(article: str, expected: list[str]) -> None:
    assert refused(memory_html(article=article)) == expected


def test_messages_quote_at_most_40_utf16_units_as_javascript_slices() -> None:
    rockets = "🚀" * 30  # 60 UTF-16 units: the cut lands on a pair boundary after 20 rockets
    assert refused(memory_html(article=f"<p><mark>A.</mark> <time>{rockets}</time></p>")) == [
        f'<time> without datetime: "{"🚀" * 20}"'
    ]
    odd = "x" + rockets  # the cut lands inside the 20th rocket
    assert refused(memory_html(article=f"<p><mark>A.</mark> <time>{odd}</time></p>")) == [
        f'<time> without datetime: "x{"🚀" * 19}\ufffd"'
    ]


def test_article_count_and_title_rules() -> None:
    two = memory_html(article="<p><mark>A.</mark></p></article><article><p>B</p>")
    assert refused(two) == ["2 <article> elements: a memory file needs exactly one"]
    assert refused(memory_html(title="   ")) == ["empty <title>"]
    no_head = "<article><p><mark>A.</mark></p></article>"
    assert refused(no_head) == [
        "0 <title> elements: a memory file needs exactly one",
        'missing required <meta name="memhtml-type">',
        'missing required <meta name="memhtml-status">',
        'missing required <meta name="memhtml-created">',
        'missing required <meta name="memhtml-updated">',
    ]


def test_type_status_and_task_rules() -> None:
    assert refused(memory_html(metas={"memhtml-type": "note", "memhtml-status": "gone"})) == [
        '<meta name="memhtml-type" content="note"> is outside the type vocabulary',
        '<meta name="memhtml-status" content="gone"> is neither active nor archived',
    ]
    assert refused(memory_html(metas={"memhtml-type": "task"})) == [
        'a task requires <meta name="memhtml-task-status">'
    ]
    assert refused(memory_html(metas={"memhtml-type": "task", "memhtml-task-status": "later"})) == [
        '<meta name="memhtml-task-status" content="later"> is outside the vocabulary: '
        "todo, doing, blocked, done"
    ]


def test_warnings_are_one_per_element_name_and_never_block() -> None:
    html = memory_html(
        article="<p><mark>Claim.</mark> <span>x</span><span>y</span> <u>u</u></p>"
        '<figure><div><code data-lang="c++">x</code></div></figure><p><code data-lang="a b">z</code></p>'
    )
    record = parse_memory("areas/x.html", html)
    assert record.warnings == (
        "<span> outside a <figure>: use a semantic element instead",
        "<u> is outside the closed vocabulary",
        'data-lang="a b" is not a language token',
    )
    result = check_memory("areas/x.html", html.replace("<p><mark>Claim.</mark>", "<p>"))
    assert not result.ok and result.warnings == record.warnings


# --- inputs that are not memory files ---------------------------------------------------------


def test_bytes_that_are_not_utf8_are_refused_with_the_offset() -> None:
    data = memory_html().encode()
    bad = data[:100] + b"\xff\xfe" + data[100:]
    assert refused(bad) == ["file is not valid UTF-8: invalid byte at offset 100"]


def test_a_lone_surrogate_is_refused() -> None:
    assert refused(memory_html(article="<p><mark>x\ud800</mark></p>"))[0].startswith(
        "text is not valid Unicode: lone surrogate"
    )


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00" * 64, bytes(range(256)) * 4, "<" * 5000, "<html>" + "<div>" * 4000, "\ufeff"],
)
def test_garbage_is_refused_not_crashed(data: str | bytes) -> None:
    violations = refused(data)
    assert violations and not any(v.startswith("unparseable") for v in violations)


def test_deep_nesting_and_a_ten_megabyte_file() -> None:
    deep = memory_html(
        article="<p><mark>Deep.</mark></p>" + "<section>" * 3000 + "x" + "</section>" * 3000
    )
    assert parse_memory("areas/x.html", deep).body_text.startswith("Deep. x")
    paragraph = "<p>" + ("word " * 200) + "</p>\n"
    big = memory_html(
        article="<p><mark>Big.</mark></p>\n" + paragraph * (10_000_000 // len(paragraph) + 1)
    )
    assert len(big) > 10_000_000
    started = time.perf_counter()
    record = parse_memory("areas/x.html", big)
    assert time.perf_counter() - started < 20
    assert record.word_count > 1_900_000
    assert all(chunk.char_count <= 1800 for chunk in record.chunks)


def test_is_valid_datetime_and_js_number() -> None:
    assert is_valid_datetime("2024-02-29") and not is_valid_datetime("2023-02-29")
    assert is_valid_datetime("2026-12-31T23:59:60Z")
    assert not is_valid_datetime("2026-12-31T24:00:00Z")
    assert not is_valid_datetime("0099-01-01")  # JavaScript's Date.UTC maps 0..99 to 19xx
    assert not is_valid_datetime("2026-01-01\n")
    assert not is_valid_datetime("２０２６-01-01")
    assert js_number(" 7 ") == 7 and js_number("0x10") == 16 and js_number("-1e3") == -1000
    assert js_number("") == 0 and js_number("1_000") != js_number("1_000")  # NaN
    assert js_number("-Infinity") == float("-inf") and js_number("inf") != js_number("inf")


def test_a_claim_alone_is_the_disclosure_text_without_a_second_copy() -> None:
    record = parse_memory("areas/x.html", memory_html("Sky", "The sky is blue.", body="It is."))
    assert record.disclosure is None and record.disclosure_text == "The sky is blue."
    assert record.disclosure_text is record.claim


def test_vocabulary_values_are_one_object_across_records() -> None:
    # A snapshot decode shares them through the record's Literal types; the parser interns them.
    one = parse_memory(
        "areas/a.html", memory_html("A", "A is one.", memory_type="task", task_status="todo")
    )
    two = parse_memory(
        "areas/b.html", memory_html("B", "B is two.", memory_type="task", task_status="todo")
    )
    for name in ("memory_type", "status", "para", "task_status"):
        assert getattr(one, name) is getattr(two, name), name
