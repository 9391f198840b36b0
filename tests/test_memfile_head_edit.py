"""Head editors: byte splices that land where memhtml's would and never move the content hash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.writer_vectors import HeadEditVector, cached_head_edits, meta_value

from headd.errors import InvalidOp
from headd.memfile.hashes import blob_sha_of, content_hash_of
from headd.memfile.head_edit import (
    add_entity,
    add_link,
    add_meta,
    add_tag,
    read_head,
    read_links,
    read_meta,
    read_metas,
    remove_entity,
    remove_link,
    remove_meta,
    remove_tag,
    set_meta,
)
from headd.memfile.parse import parse_memory
from headd.memfile.render import MemoryFields, render_memory
from headd.record import Link


@pytest.fixture
def writer_head_edits(anchor_store: Path) -> tuple[HeadEditVector, ...]:
    return cached_head_edits(anchor_store)


BASE = MemoryFields(
    title="Pool ceiling",
    memory_type="semantic",
    created="2026-11-30T09:00:00Z",
    claim="The pool ceiling is 64.",
    body=("Raised in March.", "```sql\nSHOW max_connections;\n```"),
    entities=("service:ledger",),
    tags=("database",),
)


def _body(html: str) -> str:
    return html[html.index("<body>") :]


def test_set_meta_replaces_in_place() -> None:
    html = render_memory(BASE)
    out = set_meta(html, "memhtml-updated", "2026-12-01T00:00:00Z")
    assert out.count("\n") == html.count("\n")
    assert read_meta(out, "updated") == "2026-12-01T00:00:00Z"
    assert out.replace("2026-12-01T00:00:00Z", "2026-11-30T09:00:00Z") == html


def test_set_meta_inserts_at_the_template_position() -> None:
    html = render_memory(BASE)
    out = set_meta(html, "memhtml-valid-until", "2026-12-01")
    out = set_meta(out, "confidence", "0.50")
    out = set_meta(out, "memhtml-archived", "2026-12-01T00:00:00Z")
    expected = render_memory(
        msgspec_replace(
            BASE, valid_until="2026-12-01", confidence=0.5, archived_at="2026-12-01T00:00:00Z"
        )
    )
    assert out == expected


def msgspec_replace(fields: MemoryFields, **changes: object) -> MemoryFields:
    import msgspec

    return msgspec.structs.replace(fields, **changes)


def test_entities_tags_and_links_land_where_the_template_puts_them() -> None:
    html = render_memory(msgspec_replace(BASE, entities=(), tags=()))
    out = add_tag(html, "database")
    out = add_entity(out, "service:ledger")
    out = add_link(out, "caused_by", "/areas/a.html")
    out = add_entity(out, "tool:psql")
    out = add_link(out, "laterally_related", "/areas/b.html")
    expected = render_memory(
        msgspec_replace(
            BASE,
            entities=("service:ledger", "tool:psql"),
            links=(
                Link(rel="caused_by", href="/areas/a.html"),
                Link(rel="laterally_related", href="/areas/b.html"),
            ),
        )
    )
    assert out == expected


def test_adds_are_idempotent_and_removes_take_the_whole_line() -> None:
    html = render_memory(BASE)
    assert add_entity(html, "service:ledger") == html
    linked = add_link(html, "supports", "/areas/x.html")
    assert add_link(linked, "supports", "/areas/x.html") == linked
    assert remove_link(linked, "supports", "/areas/x.html") == html
    assert remove_link(linked, "supports") == html
    assert remove_link(html, "supports") == html  # absent is a no-op
    assert remove_entity(add_entity(html, "tool:x"), "tool:x") == html
    assert remove_tag(html, "database").count("\n") == html.count("\n") - 1
    assert remove_meta(html, "memhtml-tag") == remove_tag(html, "database")


def test_values_are_escaped_and_read_back() -> None:
    html = render_memory(BASE)
    odd = 'a "quoted" & odd\u00a0value\nwith a newline'
    out = add_entity(html, odd)
    assert read_metas(out, "entity") == ["service:ledger", odd]
    assert out.count("\n") == html.count("\n") + 1  # a newline in a value never splits the line
    assert parse_memory("areas/x.html", out).entities[-1] == odd.strip()


@pytest.mark.parametrize(
    ("call", "rule"),
    [
        (lambda h: set_meta(h, "memhtml-colour", "red"), "meta-vocabulary"),
        (lambda h: add_meta(h, "memhtml-status", "x"), "repeatable"),
        (lambda h: remove_meta(h, "memhtml-updated"), "required-meta"),
        (lambda h: add_link(h, "befriends", "/areas/x.html"), "rel-vocabulary"),
        (lambda h: add_link(h, "supports", "areas/x.html"), "href"),
        (lambda h: add_link(h, "supports", "//host/x.html"), "href"),
        (lambda h: set_meta(h.replace("</head>", ""), "updated", "x"), "head-not-closed"),
        (lambda h: set_meta(h.split("</head>")[0], "updated", "x"), "no-head-close"),
    ],
)
def test_edits_that_cannot_apply_raise_invalid_op(call, rule: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidOp) as err:
        call(render_memory(BASE))
    assert err.value.details["rule"] == rule
    assert err.value.code == "ERR_INVALID_OP"


def test_the_head_reader_skips_comments_title_text_and_odd_attributes() -> None:
    html = (
        "<!doctype html><html><head><title>a </head> <meta name=memhtml-type content=x></title>"
        "<!-- <meta name='memhtml-status' content='no'> </head> -->"
        '<META NAME=\'memhtml-status\' Content=active data-x><meta name="memhtml-tag" content="a&amp;b">'
        "</head><body><article><p><mark>x</mark></p></article></body></html>"
    )
    head = read_head(html)
    assert [(t.tag, t.attrs.get("name"), t.attrs.get("content")) for t in head.tags] == [
        ("meta", "memhtml-status", "active"),
        ("meta", "memhtml-tag", "a&b"),
    ]
    # A one-line head: edits splice the element only, never a whole line (the article is on it).
    before = content_hash_of(html)
    out = set_meta(remove_tag(html, "a&b"), "memhtml-updated", "2026-01-01T00:00:00Z")
    out = add_link(add_entity(out, "x:y"), "supports", "/areas/x.html")
    assert content_hash_of(out) == before
    assert _body(out) == _body(html)
    assert read_meta(out, "updated") == "2026-01-01T00:00:00Z"
    assert read_links(out) == [Link(rel="supports", href="/areas/x.html")]


# ---------------------------------------------------------------------------------------------
# hypothesis: no sequence of head edits moves the content hash


_words = st.text(alphabet="abc xyz&<>\"'\u00a0é", min_size=1, max_size=12)
_valid_fields = st.builds(
    lambda title, claim, body, entities, tags, memory_type: MemoryFields(
        title=title,
        memory_type=memory_type,
        created="2026-11-30T09:00:00Z",
        claim=claim,
        body=tuple(body),
        entities=tuple(entities),
        tags=tuple(tags),
    ),
    title=_words.filter(lambda s: s.strip() != ""),
    claim=_words.filter(lambda s: s.strip() != ""),
    body=st.lists(
        st.one_of(_words, st.just("```\n  <pre>\n\n x\n```"), st.just("para\r\nwith crlf")),
        max_size=3,
    ),
    entities=st.lists(st.sampled_from(["service:a", "person:b", "tool:c"]), max_size=2),
    tags=st.lists(st.sampled_from(["t1", "t2"]), max_size=2),
    memory_type=st.sampled_from(["semantic", "episodic", "procedural"]),
)
_settable = st.sampled_from(
    [
        ("memhtml-updated", "2026-12-01T00:00:00Z"),
        ("memhtml-confidence", "0.50"),
        ("memhtml-importance", "7"),
        ("memhtml-valid-from", "2026-01-01"),
        ("memhtml-valid-until", "2027-01-01"),
        ("memhtml-archived", "2026-12-01T00:00:00Z"),
        ("memhtml-superseded-by", "/areas/new.html"),
        ("memhtml-needs-revision", "true"),
        ("memhtml-reprieves", "2"),
        ("memhtml-author", 'a "human" & co'),
        ("memhtml-status", "archived"),
    ]
)
_rels = st.sampled_from(["supports", "caused_by", "laterally_related", "about_person"])
_hrefs = st.sampled_from(["/areas/a.html", "/resources/b.html?x=1&y=2", "/archive/2026/c.html"])
_edits = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _settable),
        st.tuples(
            st.just("remove"),
            _settable.map(lambda pair: pair[0]).filter(
                lambda name: name not in ("memhtml-updated", "memhtml-status")
            ),
        ),
        st.tuples(st.just("add_entity"), st.sampled_from(["service:a", "vendor:z", 'x:&"y'])),
        st.tuples(st.just("remove_entity"), st.sampled_from(["service:a", "vendor:z"])),
        st.tuples(st.just("add_tag"), st.sampled_from(["t1", "t3"])),
        st.tuples(st.just("remove_tag"), st.sampled_from(["t1", "t2"])),
        st.tuples(st.just("add_link"), st.tuples(_rels, _hrefs)),
        st.tuples(st.just("remove_link"), st.tuples(_rels, _hrefs)),
    ),
    max_size=12,
)


def _apply(html: str, edit: tuple) -> str:  # type: ignore[type-arg]
    kind, arg = edit
    if kind == "set":
        return set_meta(html, *arg)
    if kind == "remove":
        return remove_meta(html, arg)
    if kind == "add_entity":
        return add_entity(html, arg)
    if kind == "remove_entity":
        return remove_entity(html, arg)
    if kind == "add_tag":
        return add_tag(html, arg)
    if kind == "remove_tag":
        return remove_tag(html, arg)
    if kind == "add_link":
        return add_link(html, *arg)
    return remove_link(html, *arg)


@settings(max_examples=60, deadline=None)
@given(_valid_fields, _edits)
def test_no_head_edit_moves_the_content_hash(fields: MemoryFields, edits: list) -> None:  # type: ignore[type-arg]
    html = render_memory(fields)
    original = parse_memory("areas/inbox/x.html", html)
    entities = list(fields.entities)
    links: list[tuple[str, str]] = []
    for edit in edits:
        html = _apply(html, edit)
        kind, arg = edit
        # a model of what the head should now say
        if kind == "add_entity" and arg not in entities:
            entities.append(arg)
        elif kind == "remove_entity":
            entities = [e for e in entities if e != arg]
        elif kind == "add_link" and tuple(arg) not in links:
            links.append(tuple(arg))
        elif kind == "remove_link":
            links = [link for link in links if link != tuple(arg)]
    record = parse_memory("areas/inbox/x.html", html)  # still a valid memory
    assert record.content_hash == original.content_hash == content_hash_of(html)
    assert _body(html) == _body(render_memory(fields))
    assert read_metas(html, "entity") == entities
    assert [(link.rel, link.href) for link in read_links(html)] == links
    names = re.findall(r'<meta name="(memhtml-[a-z-]+)"', html)
    from headd.memfile.vocabulary import META_ORDER

    assert names == sorted(names, key=META_ORDER.index)  # the template's order is kept


# ---------------------------------------------------------------------------------------------
# the corpus: every recorded link / task-status edit, re-done


def test_every_recorded_link_and_task_status_edit_is_reproduced(
    writer_head_edits: tuple[HeadEditVector, ...],
) -> None:
    done = 0
    for vector in writer_head_edits:
        argv = vector.argv or []
        if argv[1:2] == ["link"]:
            src, rel, dst = argv[2], argv[3], argv[4]
            assert src == vector.path_before
            out = add_link(vector.before, rel, "/" + dst)
        elif argv[1:3] == ["task", "status"] and argv[4] != "done":
            now = meta_value(vector.after, "updated")  # the tool's clock at that commit
            assert now is not None and now != meta_value(vector.before, "updated")
            out = set_meta(vector.before, "memhtml-task-status", argv[4])
            out = set_meta(out, "memhtml-updated", now)
        else:
            continue
        assert blob_sha_of(out) == vector.blob_after, vector.subject
        assert content_hash_of(out) == vector.content_hash_before
        done += 1
    assert done == 21  # 17 links, 4 task status changes


def test_hand_written_heads_are_edited_without_moving_the_hash(
    anchor_store: Path, anchor_goldens: dict[str, dict]
) -> None:
    """The 13 hand-written files (CRLF, BOM, pretty-printed, uppercase, stale hash…)."""
    hand = [p for p, row in anchor_goldens.items() if not row["content_hash_matches_meta"]]
    assert len(hand) == 13
    for path in hand:
        html = (anchor_store / path).read_bytes().decode("utf-8")
        out = set_meta(html, "memhtml-updated", "2026-12-01T00:00:00Z")
        out = set_meta(out, "memhtml-archived", "2026-12-01T00:00:00Z")
        out = add_entity(out, "tool:headd")
        out = add_link(out, "relates_to", "/areas/elsewhere.html")
        out = remove_tag(out, "hand")
        record = parse_memory(path, out)
        assert record.content_hash == anchor_goldens[path]["content_hash"], path
        assert _body(out) == _body(html), path
        assert record.updated_at == "2026-12-01T00:00:00Z"
        assert "tool:headd" in record.entities
        assert ("relates_to", "areas/elsewhere.html") in [
            (link.rel, link.href.lstrip("/")) for link in record.links
        ]


# ---------------------------------------------------------------------------------------------
# the head tokenizer agrees with a real HTML5 parser on what the head's metas and links say

_attr_value = st.text(alphabet="ab-:/ &;\"'<>=\u00a0é", max_size=8)


def _quoted(value: str, style: str) -> str:
    if style == "dq":
        return '"' + value.replace("&", "&amp;").replace('"', "&quot;") + '"'
    if style == "sq":
        return "'" + value.replace("&", "&amp;").replace("'", "&#39;") + "'"
    safe = value.replace("&", "&amp;")
    for ch, ref in (
        (" ", "&#32;"),
        ('"', "&quot;"),
        ("'", "&#39;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("=", "&#61;"),
    ):
        safe = safe.replace(ch, ref)
    return safe or '""'


@st.composite
def _head_element(draw: st.DrawFn) -> str:
    tag = draw(st.sampled_from(["meta", "META", "link", "Link"]))
    key, val = ("name", "content") if tag.lower() == "meta" else ("rel", "href")
    pairs = [
        (
            draw(st.sampled_from([key, key.upper()])),
            "memhtml-" + draw(st.sampled_from(["tag", "x"])),
        ),
        (draw(st.sampled_from([val, val.title()])), draw(_attr_value)),
    ]
    if draw(st.booleans()):
        pairs.append(("data-x", draw(_attr_value)))
    if draw(st.booleans()):
        pairs.reverse()
    sep = draw(st.sampled_from([" ", "  ", "\n", "\t"]))
    body = sep.join(
        f"{k}={_quoted(v, draw(st.sampled_from(['dq', 'sq', 'uq'])))}" for k, v in pairs
    )
    close = draw(st.sampled_from([">", "/>", " >", " />"]))
    comment = draw(st.sampled_from(["", "<!-- <meta name=memhtml-tag content=no> -->", "\n"]))
    return f"<{tag} {body}{close}{comment}"


@settings(max_examples=80, deadline=None)
@given(st.lists(_head_element(), max_size=6))
def test_the_head_tokenizer_agrees_with_an_html5_parser(elements: list[str]) -> None:
    from selectolax.lexbor import LexborHTMLParser

    html = (
        "<!doctype html><html><head><title>t</title>\n"
        + "\n".join(elements)
        + "\n</head><body><article><p><mark>x</mark></p></article></body></html>"
    )
    tree = LexborHTMLParser(html)
    expected = [
        (node.tag, {k: v or "" for k, v in node.attributes.items()})
        for node in tree.css("head meta, head link")
    ]
    got = [(t.tag, t.attrs) for t in read_head(html).tags]
    assert got == expected
