"""The one memory-file builder: memhtml's writer template, with every knob a test needs.

The layout is the one memhtml 0.15.1's writer produces (LF, no indentation): the head's metas in
its order (type, status, created, updated, content hash, task status, then entities, tags and
links), then an ``<article>`` whose first paragraph holds the claim in ``<mark>`` with the first
body paragraph joined on. Text is escaped as the writer escapes it; ``article`` and
``extra_head`` are markup and pass through untouched, for tests of what the writer never writes.
"""

from __future__ import annotations

import html as html_lib
from collections.abc import Mapping, Sequence

from headd.memfile.hashes import content_hash_of

CREATED = "2026-11-01T09:00:00Z"


# Markup pieces that exercise the parser's odd corners: implied end tags, pre, references,
# forbidden things, unknown elements, comments, CR/CRLF, NBSP, astral characters.
FRAGMENTS = [
    "<p>",
    "</p>",
    "<mark>",
    "</mark>",
    "<pre>",
    "</pre>",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "&nbsp;",
    "&amp;",
    "&#x1F680;",
    "&bogus;",
    "<li>",
    "<ul>",
    "</ul>",
    "<aside>",
    "<details>",
    "<summary>",
    "<dl><dt>k</dt><dd>",
    '<data value="0x1f">',
    "<time datetime='2026-01-01'>",
    "<time>",
    "<div>",
    "<span>",
    "<table><td>",
    "<script>",
    "<!-- c -->",
    "<code data-lang='py'>",
    "<cite>",
    '<q cite="/x">',
    "<dfn>",
    "</article><article>",
    "<svg><title>",
    "\u00a0",
    "\u3000",
    "\ufeff",
    "\x00",
    "🚀",
    "word",
    ".",
]


def _text(value: str) -> str:
    return html_lib.escape(value, quote=False)


def _attr(value: str) -> str:
    return html_lib.escape(value, quote=True)


def memory_html(
    title: str = "A memory",
    claim: str = "The sky is blue.",
    *,
    body: str | Sequence[str] = (),
    article: str | None = None,
    memory_type: str = "semantic",
    status: str = "active",
    created: str = CREATED,
    updated: str | None = None,
    content_hash: bool = False,
    task_status: str | None = None,
    metas: Mapping[str, str] | None = None,
    entities: Sequence[str] = (),
    tags: Sequence[str] = (),
    links: Sequence[tuple[str, str]] = (),
    facets: Sequence[tuple[str, str]] = (),
    extra_head: str = "",
    newline: str = "\n",
) -> str:
    """A whole memory file.

    ``body`` is prose after the claim (one string or paragraphs); ``article`` replaces the whole
    article markup. ``metas`` are further ``<meta>`` names and values, overriding the defaults in
    place, as markup (a test's odd value passes as written). ``links`` are ``(rel, href)`` with the rel as the record names it (``relates_to``).
    ``content_hash`` adds the ``memhtml-content-hash`` meta the writer stamps.
    """
    if article is None:
        paragraphs = [p.strip() for p in ([body] if isinstance(body, str) else body) if p.strip()]
        mark = f"<mark>{_text(claim.strip())}</mark>"
        first = f"<p>{mark} {_text(paragraphs[0])}</p>" if paragraphs else f"<p>{mark}</p>"
        parts = [first, *(f"<p>{_text(p)}</p>" for p in paragraphs[1:])]
        if facets:
            pairs = "".join(f"<dt>{_text(n)}</dt><dd>{_text(v)}</dd>" for n, v in facets)
            parts.append(f"<dl>{pairs}</dl>")
        article = "\n".join(parts)
    head: dict[str, str] = {
        "memhtml-type": memory_type,
        "memhtml-status": status,
        "memhtml-created": created,
        "memhtml-updated": updated or created,
    }
    if content_hash:
        head["memhtml-content-hash"] = content_hash_of(article)
    if task_status is not None:
        head["memhtml-task-status"] = task_status
    head.update(metas or {})
    lines = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        *(f'<meta name="{name}" content="{value}">' for name, value in head.items()),
        *(f'<meta name="memhtml-entity" content="{_attr(e)}">' for e in entities),
        *(f'<meta name="memhtml-tag" content="{_attr(t)}">' for t in tags),
        *(f'<link rel="memhtml-{r.replace("_", "-")}" href="{_attr(h)}">' for r, h in links),
        *([extra_head] if extra_head else []),
        "</head>",
        "<body>",
        "<article>",
        article,
        "</article>",
        "</body>",
        "</html>",
        "",
    ]
    return newline.join(lines)
