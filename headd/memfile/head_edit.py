"""Head editors: byte splices on a memory file's ``<head>``, never a parse-and-reserialize.

Why splices: re-serializing a whole file can move the content hash (the HTML parser eats one
newline after ``<pre>``) and turns a bookkeeping stamp into a content diff. Every editor here
changes one line of the head (or inserts one), and the edited range always ends before
``</head>``, so the article's bytes, and the content hash with them, cannot move.

Positions follow memhtml's editors, so a tool-written file edited here equals what memhtml would
write: a set meta replaces the first meta of its name in place, else goes before the first
``memhtml-`` meta that sorts after it in META_ORDER, else after the last that sorts before it,
else before the first link / at ``</head>``; an added repeatable value goes after the last of its
name; an added link after the last ``memhtml-`` link, else after the last meta, else at
``</head>``. A removed element takes its whole line with it.

One deliberate difference, invisible on template files (one element per line): memhtml cuts or
inserts whole lines even when a line holds other markup, which on a one-line hand-written head
could cut into the article. Here a line is cut or inserted before only when the element is alone
on it; otherwise the splice is the element's own span.

The head is read by a small tokenizer (comments, ``<title>`` RCDATA, ``<script>``/``<style>`` raw
text, quoted and unquoted attributes, character references in values), not a DOM: a DOM would not
give byte offsets. Edits that cannot apply raise :class:`headd.errors.InvalidOp`.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass

from headd.errors import InvalidOp
from headd.memfile import vocabulary
from headd.memfile.render import link_line, meta_line
from headd.record import Link

# ---------------------------------------------------------------------------------------------
# Reading the head


@dataclass(frozen=True, slots=True)
class HeadTag:
    """A ``<meta>`` or ``<link>`` start tag in the head: its name, source span and attributes."""

    tag: str
    start: int
    end: int
    attrs: dict[str, str]


@dataclass(frozen=True, slots=True)
class Head:
    """The head of a file: its meta/link tags in order and where ``</head>`` starts."""

    tags: tuple[HeadTag, ...]
    close_start: int

    def metas(self, name: str | None = None) -> list[HeadTag]:
        """``memhtml-`` metas (of ``name`` when given), in document order."""
        return [
            t
            for t in self.tags
            if t.tag == "meta"
            and t.attrs.get("name", "").startswith(vocabulary.META_PREFIX)
            and (name is None or t.attrs.get("name") == name)
        ]

    def links(self) -> list[HeadTag]:
        """``memhtml-`` links, in document order."""
        return [
            t
            for t in self.tags
            if t.tag == "link" and t.attrs.get("rel", "").startswith(vocabulary.META_PREFIX)
        ]


_HEAD_CONTENT = frozenset(
    {"html", "head", "title", "meta", "link", "base", "basefont", "bgsound", "style", "script"}
    | {"noscript", "template"}
)
_TAG_NAME_END = re.compile(r"[\t\n\f\r />]")
# One attribute (or the tag's end) in the tokenizer's terms: separators, then ``>`` or a name
# (its first character may be ``=``), then optionally ``=`` and a double-quoted, single-quoted
# or unquoted value. An unterminated quote runs to the end of the input, as in the standard.
_ATTRIBUTE = re.compile(
    r"[\t\n\f\r /]*(?:(?P<end>>)|(?P<name>[^\t\n\f\r />][^\t\n\f\r />=]*)"
    r"(?:[\t\n\f\r ]*=[\t\n\f\r ]*"
    r"(?:\"(?P<dq>[^\"]*)\"?|'(?P<sq>[^']*)'?|(?P<uq>[^\t\n\f\r >]*)))?)?"
)
_SPACE = " \t\n\r\f"


def _refuse(reason: str, rule: str) -> InvalidOp:
    return InvalidOp(f"head edit refused: {reason}", {"rule": rule})


def _skip_to(text: str, pos: int, needle: str) -> int:
    """The offset just past ``needle`` (case-insensitive) from ``pos``, or the end."""
    at = text.lower().find(needle, pos)
    return len(text) if at == -1 else at + len(needle)


def _read_tag(text: str, pos: int) -> tuple[str, bool, dict[str, str], int]:
    """Tokenize the tag at ``pos`` (``<`` or ``</``): (name, is_end, attrs, end offset).
    Attribute names are lowercased and the first of a duplicated name wins, as in HTML."""
    is_end = text.startswith("</", pos)
    i = pos + (2 if is_end else 1)
    m = _TAG_NAME_END.search(text, i)
    name_end = m.start() if m else len(text)
    name = text[i:name_end].lower()
    i = name_end
    attrs: dict[str, str] = {}
    n = len(text)
    while i < n:
        am = _ATTRIBUTE.match(text, i)
        if am is None or am.end() == i:  # only reachable at the end of the input
            break
        if am.group("end") is not None:
            return name, is_end, attrs, am.end()
        i = am.end()
        attr_name = am.group("name")
        if attr_name is None:
            continue
        raw = am.group("dq")
        if raw is None:
            raw = am.group("sq")
        if raw is None:
            raw = am.group("uq") or ""
        attrs.setdefault(attr_name.lower(), html_lib.unescape(raw) if "&" in raw else raw)
    return name, is_end, attrs, n


def read_head(html: str) -> Head:
    """Tokenize up to ``</head>``; refuse a file whose head is not explicitly closed before any
    body content (there would be nothing safe to splice against)."""
    tags: list[HeadTag] = []
    pos = 0
    n = len(html)
    while True:
        lt = html.find("<", pos)
        if lt == -1 or lt + 1 >= n:
            raise _refuse("no </head> in the file", "no-head-close")
        if html.startswith("<!--", lt):
            if html.startswith("<!-->", lt) or html.startswith("<!--->", lt):
                pos = html.index(">", lt) + 1
            else:
                pos = _skip_to(html, lt + 4, "-->")
            continue
        if html[lt + 1] in "!?":
            pos = _skip_to(html, lt + 2, ">")
            continue
        is_tag = html[lt + 1].isascii() and html[lt + 1].isalpha()
        is_end = (
            html[lt + 1] == "/" and lt + 2 < n and html[lt + 2].isascii() and html[lt + 2].isalpha()
        )
        if not (is_tag or is_end):
            pos = lt + 1
            continue
        name, end_tag, attrs, after = _read_tag(html, lt)
        if end_tag:
            if name == "head":
                return Head(tags=tuple(tags), close_start=lt)
            pos = after
            continue
        if name not in _HEAD_CONTENT:
            raise _refuse(f"<{name}> before </head>", "head-not-closed")
        if name in ("meta", "link"):
            tags.append(HeadTag(tag=name, start=lt, end=after, attrs=attrs))
        if name in ("title", "script", "style", "noscript", "template"):
            after = _skip_to_end_tag(html, after, name)
        pos = after


def _skip_to_end_tag(html: str, pos: int, name: str) -> int:
    """Past the raw/RCDATA content of ``name`` (``</name`` ends it, case-insensitive)."""
    lower = html.lower()
    at = lower.find("</" + name, pos)
    if at == -1:
        raise _refuse(f"<{name}> never closed", "unclosed-" + name)
    close = html.find(">", at)
    return len(html) if close == -1 else close + 1


def read_meta(html: str, name: str) -> str | None:
    """The content of the first head meta named ``name``, or None."""
    found = read_head(html).metas(_meta_name(name))
    return found[0].attrs.get("content", "") if found else None


def read_metas(html: str, name: str) -> list[str]:
    """Every content of the head metas named ``name`` (a repeatable's values), in order."""
    return [t.attrs.get("content", "") for t in read_head(html).metas(_meta_name(name))]


def read_links(html: str) -> list[Link]:
    """The head's ``memhtml-`` links with a rel of the vocabulary, as (bare rel, href)."""
    out: list[Link] = []
    for tag in read_head(html).links():
        rel = vocabulary.rel_of_token(tag.attrs.get("rel", ""))
        if rel is not None and "href" in tag.attrs:
            out.append(Link(rel=rel, href=tag.attrs["href"]))
    return out


# ---------------------------------------------------------------------------------------------
# Splicing


def _meta_name(name: str) -> str:
    full = name if name.startswith(vocabulary.META_PREFIX) else vocabulary.META_PREFIX + name
    if full not in vocabulary.META_NAMES:
        raise InvalidOp(f"unknown meta name: {name}", {"name": name, "rule": "meta-vocabulary"})
    return full


def _order(name: str) -> int:
    try:
        return vocabulary.META_ORDER.index(name)
    except ValueError:
        return len(vocabulary.META_ORDER)


def _line_start(html: str, offset: int) -> int:
    return html.rfind("\n", 0, offset) + 1


def _line_end(html: str, offset: int) -> int:
    at = html.find("\n", offset)
    return len(html) if at == -1 else at + 1


def _blank(text: str) -> bool:
    return text.strip(_SPACE) == ""


def _insert_before(html: str, offset: int, line: str) -> str:
    """Insert ``line`` as its own line before the tag at ``offset`` (bare when it shares a line)."""
    start = _line_start(html, offset)
    if _blank(html[start:offset]):
        return html[:start] + line + "\n" + html[start:]
    return html[:offset] + line + html[offset:]


def _insert_after(html: str, tag: HeadTag, line: str) -> str:
    """Insert ``line`` as its own line after ``tag`` (bare when the tag shares its line)."""
    end = _line_end(html, tag.end)
    if _blank(html[tag.end : end]):
        if not html[:end].endswith("\n"):
            return html[:end] + "\n" + line + html[end:]
        return html[:end] + line + "\n" + html[end:]
    return html[: tag.end] + line + html[tag.end :]


def _cut(html: str, tags: list[HeadTag]) -> str:
    """Remove each tag, with its whole line when it is alone on it; back to front."""
    for tag in sorted(tags, key=lambda t: t.start, reverse=True):
        start, end = _line_start(html, tag.start), _line_end(html, tag.end)
        if _blank(html[start : tag.start]) and _blank(html[tag.end : end]):
            html = html[:start] + html[end:]
        else:
            html = html[: tag.start] + html[tag.end :]
    return html


def _insert_meta(html: str, head: Head, name: str, line: str) -> str:
    target = _order(name)
    metas = head.metas()
    later = next((m for m in metas if _order(m.attrs["name"]) > target), None)
    if later is not None:
        return _insert_before(html, later.start, line)
    earlier = [m for m in metas if _order(m.attrs["name"]) <= target]
    if earlier:
        return _insert_after(html, earlier[-1], line)
    links = head.links()
    if links:
        return _insert_before(html, links[0].start, line)
    return _insert_before(html, head.close_start, line)


def set_meta(html: str, name: str, value: str) -> str:
    """Set a head meta: the first meta of that name is replaced in place, else one line is
    inserted at its template position. On a repeatable name this sets the FIRST value."""
    full = _meta_name(name)
    head = read_head(html)
    existing = head.metas(full)
    line = meta_line(full, value)
    if existing:
        first = existing[0]
        return html[: first.start] + line + html[first.end :]
    return _insert_meta(html, head, full, line)


def remove_meta(html: str, name: str, value: str | None = None) -> str:
    """Remove every meta of ``name`` (only those whose content is ``value`` when given), each
    with its line. Absent is a no-op; a required meta (type, status, created, updated) is
    refused, since the file would stop being a memory."""
    full = _meta_name(name)
    if full in vocabulary.REQUIRED_META:
        raise InvalidOp(
            f"{full} is required; set it instead", {"name": full, "rule": "required-meta"}
        )
    head = read_head(html)
    doomed = [t for t in head.metas(full) if value is None or t.attrs.get("content") == value]
    return _cut(html, doomed)


def add_meta(html: str, name: str, value: str) -> str:
    """Append a value of a repeatable meta (entity, tag, alias) after the last of its name, else
    at its template position. Idempotent: a value already present is a no-op."""
    full = _meta_name(name)
    if full not in vocabulary.REPEATABLE_META:
        raise InvalidOp(f"{full} does not repeat; use set", {"name": full, "rule": "repeatable"})
    head = read_head(html)
    present = head.metas(full)
    if any(t.attrs.get("content") == value for t in present):
        return html
    line = meta_line(full, value)
    if present:
        return _insert_after(html, present[-1], line)
    return _insert_meta(html, head, full, line)


def add_entity(html: str, entity: str) -> str:
    """Add a ``memhtml-entity`` (``type:name``); idempotent."""
    return add_meta(html, "memhtml-entity", entity)


def remove_entity(html: str, entity: str) -> str:
    """Remove the ``memhtml-entity`` metas whose value is ``entity``; absent is a no-op."""
    return remove_meta(html, "memhtml-entity", entity)


def add_tag(html: str, tag: str) -> str:
    """Add a ``memhtml-tag``; idempotent."""
    return add_meta(html, "memhtml-tag", tag)


def remove_tag(html: str, tag: str) -> str:
    """Remove the ``memhtml-tag`` metas whose value is ``tag``."""
    return remove_meta(html, "memhtml-tag", tag)


def _rel_checked(rel: str) -> str:
    if rel not in vocabulary.REL_CLASS:
        raise InvalidOp(f"unknown link rel: {rel}", {"rel": rel, "rule": "rel-vocabulary"})
    return rel


def add_link(html: str, rel: str, href: str) -> str:
    """Add ``<link rel="memhtml-REL" href="HREF">`` after the last ``memhtml-`` link, else after
    the last meta, else at ``</head>``. Idempotent on (rel, href). ``rel`` is bare
    (``caused_by``); ``href`` is root-relative (``/areas/x.html``)."""
    token = vocabulary.rel_token_of(_rel_checked(rel))
    if not href.startswith("/") or href.startswith("//"):
        raise InvalidOp(
            "link href must be root-relative (/bucket/…)", {"href": href, "rule": "href"}
        )
    head = read_head(html)
    links = head.links()
    if any(t.attrs.get("rel") == token and t.attrs.get("href") == href for t in links):
        return html
    line = link_line(rel, href)
    if links:
        return _insert_after(html, links[-1], line)
    metas = head.metas()
    if metas:
        return _insert_after(html, metas[-1], line)
    return _insert_before(html, head.close_start, line)


def remove_link(html: str, rel: str, href: str | None = None) -> str:
    """Remove the ``memhtml-`` links of ``rel`` (only the one to ``href`` when given)."""
    token = vocabulary.rel_token_of(_rel_checked(rel))
    head = read_head(html)
    doomed = [
        t
        for t in head.links()
        if t.attrs.get("rel") == token and (href is None or t.attrs.get("href") == href)
    ]
    return _cut(html, doomed)
