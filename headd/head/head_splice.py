"""Byte splices into a memory file's ``<head>``: add or cut one link, add or cut one entity meta.

The overlay's ``link``/``unlink``/``label``/``unlabel`` ops edit the head only, so the article and
its content hash cannot move: the file is never parsed and re-serialized, one line is inserted
or removed and every other byte stays. Lines follow the writer's template: a new link goes after
the last ``memhtml-`` link (else just before ``</head>``), a new entity meta after the last entity
meta (else before the first tag or alias meta or link, else before ``</head>``). Removing a line
takes its newline with it, so an add followed by a remove gives back the original bytes.

These are minimal private splices until the writer's shared editors
(``headd.memfile.head_edit``) are in place; both follow the same template.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable
from dataclasses import dataclass

from headd.errors import InvalidOp
from headd.memfile.vocabulary import rel_of_token, rel_token_of

_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)
_TAG = re.compile(r"<(meta|link)\b([^>]*)>", re.IGNORECASE)
_ATTR = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""")


def _escape_attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("\u00a0", "&nbsp;")
        .replace("\r", "&#13;")
        .replace("\n", "&#10;")
    )


@dataclass(frozen=True)
class _HeadTag:
    kind: str  # "meta" | "link"
    attrs: dict[str, str]
    start: int
    end: int


def _attrs(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in _ATTR.finditer(raw):
        name = match.group(1).lower()
        value = next((g for g in match.group(2, 3, 4) if g is not None), "")
        out.setdefault(name, html_lib.unescape(value))
    return out


def _head_end(html: str) -> int:
    match = _HEAD_END.search(html)
    if match is None:
        raise InvalidOp("the file has no </head> to edit", {"rule": "head-splice"})
    return match.start()


def _head_tags(html: str) -> list[_HeadTag]:
    end = _head_end(html)
    return [
        _HeadTag(m.group(1).lower(), _attrs(m.group(2)), m.start(), m.end())
        for m in _TAG.finditer(html, 0, end)
    ]


def _insert_line_after(html: str, position: int, line: str) -> str:
    """Insert ``line`` on its own line after the element ending at ``position``."""
    newline = html.find("\n", position)
    if newline != -1 and html[position:newline].strip() == "":
        return html[: newline + 1] + line + "\n" + html[newline + 1 :]
    return html[:position] + "\n" + line + html[position:]


def _insert_line_before(html: str, position: int, line: str) -> str:
    """Insert ``line`` on its own line before the element starting at ``position``."""
    line_start = html.rfind("\n", 0, position) + 1
    if html[line_start:position].strip() == "":
        return html[:line_start] + line + "\n" + html[line_start:]
    return html[:position] + line + "\n" + html[position:]


def _cut(html: str, tag: _HeadTag) -> str:
    """Remove one element, and its whole line when it stands alone on one."""
    line_start = html.rfind("\n", 0, tag.start) + 1
    line_end = html.find("\n", tag.end)
    alone_before = html[line_start : tag.start].strip() == ""
    alone_after = line_end != -1 and html[tag.end : line_end].strip() == ""
    if alone_before and alone_after:
        return html[:line_start] + html[line_end + 1 :]
    return html[: tag.start] + html[tag.end :]


def _is_link(tag: _HeadTag) -> bool:
    return tag.kind == "link" and rel_of_token(tag.attrs.get("rel", "").strip().lower()) is not None


def _link_matches(rel: str, href: str) -> Callable[[_HeadTag], bool]:
    token = rel_token_of(rel)
    return lambda tag: (
        tag.kind == "link"
        and tag.attrs.get("rel", "").strip().lower() == token
        and tag.attrs.get("href", "").strip() == href
    )


def _meta_named(name: str) -> Callable[[_HeadTag], bool]:
    return lambda tag: tag.kind == "meta" and tag.attrs.get("name", "").strip().lower() == name


def add_link(html: str, rel: str, href: str) -> str:
    line = f'<link rel="{rel_token_of(rel)}" href="{_escape_attribute(href)}">'
    tags = _head_tags(html)
    links = [tag for tag in tags if _is_link(tag)]
    if links:
        return _insert_line_after(html, links[-1].end, line)
    return _insert_line_before(html, _head_end(html), line)


def remove_link(html: str, rel: str, href: str) -> str:
    matches = _link_matches(rel, href)
    for tag in _head_tags(html):
        if matches(tag):
            return _cut(html, tag)
    raise InvalidOp(f"no {rel} link to {href} in the head", {"rel": rel, "href": href})


def add_entity(html: str, entity: str) -> str:
    line = f'<meta name="memhtml-entity" content="{_escape_attribute(entity)}">'
    tags = _head_tags(html)
    entities = [tag for tag in tags if _meta_named("memhtml-entity")(tag)]
    if entities:
        return _insert_line_after(html, entities[-1].end, line)
    is_tag, is_alias = _meta_named("memhtml-tag"), _meta_named("memhtml-alias")
    following = [tag for tag in tags if is_tag(tag) or is_alias(tag) or _is_link(tag)]
    if following:
        return _insert_line_before(html, following[0].start, line)
    return _insert_line_before(html, _head_end(html), line)


def remove_entity(html: str, entity: str) -> str:
    is_entity = _meta_named("memhtml-entity")
    for tag in _head_tags(html):
        if is_entity(tag) and tag.attrs.get("content", "").strip() == entity:
            return _cut(html, tag)
    raise InvalidOp(f"no entity {entity} in the head", {"entity": entity})
