"""The helper's fields of one memory, read from its HTML exactly as the seed's ``memoryAt`` reads
them.

The head's records are normalized for search and the write path: links are deduplicated and
their rel is bare (``supersedes``), every ``<dd>`` of a ``<dt>`` is a facet, a ``<q>`` is a
citation, a title's whitespace is collapsed. The guest's helper is defined over the markup
instead (``link[rel^="memhtml-"]`` with the attribute as written, the ``<dd>`` right after each
``<dt>``, ``article cite`` only, ``.text.trim()``), and where the two differ the seed wins, so
the fields come from one Lexbor parse of the blob. A blob never changes, so
:mod:`headd.codemode.corpus` keeps each projection by blob id and a new version pays only for
the files it changed.

Pure: a function of the text.
"""

from __future__ import annotations

from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from headd.memfile.text import js_trim


def _text(node: LexborNode | None) -> str:
    return "" if node is None else js_trim(node.text(deep=True) or "")


def _meta_values(tree: LexborHTMLParser, name: str) -> list[str]:
    """Every non-empty ``content`` of ``meta[name=…]``, as written (the seed does not trim)."""
    values = []
    for node in tree.css(f'meta[name="{name}"]'):
        content = node.attributes.get("content") or ""
        if content != "":
            values.append(content)
    return values


def _next_element(node: LexborNode) -> LexborNode | None:
    sibling = node.next
    while sibling is not None and not _is_element(sibling):
        sibling = sibling.next
    return sibling


def _is_element(node: LexborNode) -> bool:
    return isinstance(node.tag, str) and not node.tag.startswith(("-", "!"))


def fields_of(html: str) -> dict[str, Any]:
    """The seed's fields of one memory, less ``path``, ``file`` and ``document`` (the guest adds
    those): ``title``, ``memoryType``, ``status``, ``claim``, ``tags``, ``entities``, ``links``,
    ``facets``, ``citations``, ``eventAt``."""
    tree = LexborHTMLParser(html)
    facets: dict[str, str] = {}
    for term in tree.css("article dl dt"):
        key = _text(term)
        definition = _next_element(term)
        if key != "" and definition is not None and definition.tag == "dd":
            facets[key] = _text(definition)
    types = _meta_values(tree, "memhtml-type")
    statuses = _meta_values(tree, "memhtml-status")
    time = tree.css_first("article time[datetime]")
    return {
        "title": _text(tree.css_first("title")),
        "memoryType": types[0] if types else "",
        "status": statuses[0] if statuses else "",
        "claim": _text(tree.css_first("article mark")),
        "tags": _meta_values(tree, "memhtml-tag"),
        "entities": _meta_values(tree, "memhtml-entity"),
        "links": [
            {"rel": node.attributes.get("rel") or "", "href": node.attributes.get("href") or ""}
            for node in tree.css('link[rel^="memhtml-"]')
        ],
        "facets": facets,
        "citations": [_text(node) for node in tree.css("article cite")],
        "eventAt": None if time is None else time.attributes.get("datetime"),
    }
