"""A memory's own HTML, made safe to show inside the console.

Agents write the files, so their markup is hostile: the console keeps the file's ``<body>`` and
passes it through nh3 (Rust's ammonia), an allow-list sanitizer. What survives is text
structure only: no script or style, no element that loads or embeds anything (``img``,
``iframe``, ``object``, ``meta``), no event attribute, and links only to ``http``, ``https`` or
``mailto``, or to another memory, which is rewritten to the console's own page for it. The
console's Content-Security-Policy (``security.py``) forbids script and remote loads as well, so
a sanitizer miss would still run nothing.
"""

from __future__ import annotations

from urllib.parse import quote

import nh3
from selectolax.lexbor import LexborHTMLParser

from headd.paths import para_of

TAGS = frozenset(nh3.ALLOWED_TAGS) - {"img", "area", "map"}
ATTRIBUTES = {
    "a": {"href", "title"},
    "time": {"datetime"},
    "data": {"value"},
    "abbr": {"title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
#: Whose content goes too, not just the tag (their text is no part of the memory's prose).
DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "noscript", "title", "iframe"})


def _href(tag: str, attribute: str, value: str) -> str | None:
    """A link to another memory (``/areas/x.html``) becomes the console's page for it."""
    if tag == "a" and attribute == "href" and value.startswith("/"):
        path = value.lstrip("/").split("#", 1)[0]
        if para_of(path) is not None:
            return "/memory?path=" + quote(path, safe="/")
        return None
    return value


def safe_body(html: str) -> str:
    """The file's body, sanitized (empty when the file has none)."""
    tree = LexborHTMLParser(html)
    body = tree.body
    inner = "" if body is None else (body.html or "")
    return nh3.clean(
        inner,
        tags=set(TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        attribute_filter=_href,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
