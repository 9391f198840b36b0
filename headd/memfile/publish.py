"""The generated artifacts of a store: one ``index.html`` listing per directory that holds
memories (and per ancestor, so the tree browses from the root down) and a root ``sitemap.xml``.

Byte for byte what memhtml 0.15.1's ``publish`` writes for the same records, so a store published
by either tool stays unchanged when the other publishes it, and ``.gitattributes``' ``merge=ours``
for these names holds (a conflict is resolved by regenerating, which only works when regeneration
is unambiguous). Deterministic: path-ordered, every string escaped, no moment of generation.
The head never reads them as memories (``headd.head.version.is_candidate_path``) and no session
may write them (``headd.store.validate.RESERVED_NAMES``); docs/design/mcp.md, "publish".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from headd.memfile.render import PREAMBLE, escape_attribute, escape_text

INDEX_FILENAME = "index.html"
SITEMAP_FILENAME = "sitemap.xml"


@dataclass(frozen=True, slots=True)
class Row:
    """What a listing shows of one memory (archived ones too: the archive browses as well)."""

    path: str
    title: str
    gist: str
    memory_type: str
    updated_at: str


def _directory_of(path: str) -> str:
    at = path.rfind("/")
    return "" if at <= 0 else path[:at]


def escape_xml(value: str) -> str:
    """XML's five-character rule: the sitemap is XML, not HTML."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def render_index(directory: str, rows: list[Row], children: list[str]) -> str:
    """One directory's listing: a memory-shaped ``<article>`` with a ``<mark>``, so it obeys the
    corpus's closed vocabulary, and says it is not itself a memory."""
    label = "Memory" if directory == "" else directory
    entries = "\n".join(
        f'<li><a href="{escape_attribute("/" + row.path)}">{escape_text(row.title)}</a> '
        f"<code>{escape_text(row.memory_type)}</code> "
        f'<time datetime="{escape_attribute(row.updated_at)}">{escape_text(row.updated_at)}</time>'
        f"<br><code>{escape_text(row.path.rsplit('/', 1)[-1])}</code> — {escape_text(row.gist)}</li>"
        for row in rows
    )
    subdirectories = "\n".join(
        f'<li><a href="{escape_attribute(f"/{child}/{INDEX_FILENAME}")}">{escape_text(child)}/</a></li>'
        for child in children
    )
    noun = "memory" if len(rows) == 1 else "memories"
    return (
        PREAMBLE + f"<title>{escape_text(label)}</title>\n</head>\n<body>\n<article>\n"
        f"<p><mark>{escape_text(label)} holds {len(rows)} {noun}.</mark>\n"
        "This listing is generated from the tree; it is not itself a memory.</p>\n"
        + (f"<ul>\n{subdirectories}\n</ul>\n" if subdirectories else "")
        + (f"<ul>\n{entries}\n</ul>\n" if entries else "")
        + "</article>\n</body>\n</html>\n"
    )


def render_sitemap(rows: list[Row]) -> str:
    """One ``<url>`` per memory, its ``loc`` store-relative: the store has no canonical origin."""
    urls = "\n".join(
        f"  <url>\n    <loc>/{escape_xml(row.path)}</loc>\n"
        f"    <lastmod>{escape_xml(row.updated_at)}</lastmod>\n  </url>"
        for row in rows
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{urls}\n</urlset>\n"
    )


def artifacts(rows: Iterable[Row]) -> dict[str, str]:
    """Every generated file for these records, path to text, in path order."""
    ordered = sorted(rows, key=lambda row: row.path)
    listed: dict[str, list[Row]] = {}
    children: dict[str, set[str]] = {}
    for row in ordered:
        directory = _directory_of(row.path)
        listed.setdefault(directory, []).append(row)
        children.setdefault(directory, set())
        current = directory
        while current != "":
            parent = _directory_of(current)
            listed.setdefault(parent, [])
            children.setdefault(parent, set()).add(current)
            current = parent
    out = {
        (INDEX_FILENAME if d == "" else f"{d}/{INDEX_FILENAME}"): render_index(
            d, listed[d], sorted(children[d])
        )
        for d in listed
    }
    out[SITEMAP_FILENAME] = render_sitemap(ordered)
    return dict(sorted(out.items()))
