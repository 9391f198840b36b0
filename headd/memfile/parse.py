"""Parse and check one memory file into a ``MemoryRecord``.

One pass over a browser-grade HTML5 parse (selectolax's Lexbor backend: CRLF -> LF, the newline
after ``<pre>`` dropped, character references decoded, implied elements added, exactly as memhtml's
parse5 does) collects every element with the facts the checks need; the six constraints and the
head rules then run over that list and report EVERY violation at once, and the extraction reads
the same list. A file that breaks a rule raises ``InvalidMemory(path, violations)`` with texts
equivalent to memhtml 0.15.1's; a file that merely uses an unknown element parses with warnings.

Input may be ``str`` or ``bytes``. Bytes must be UTF-8 (a file is UTF-8 by the format): bytes that
do not decode are refused with one violation naming the offset, never guessed at; a ``str``
holding a lone surrogate (it cannot be stored as UTF-8) is refused the same way. A leading BOM is
accepted: it stays in ``html`` and in the blob sha (they describe the stored bytes) but is not
given to the HTML parser (a browser's decoder strips it too). ``parse_memory`` raises nothing but
``InvalidMemory``, whatever the input.
"""

from __future__ import annotations

import calendar
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from headd.errors import InvalidMemory
from headd.memfile import text as tx
from headd.memfile.hashes import blob_sha_of, digest_of, frame_key_of
from headd.memfile.vocabulary import (
    DATETIME_METAS,
    EVENT_HANDLER_PREFIX,
    FIGURE_SCOPED_ELEMENTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_ELEMENTS,
    GIST_EXCLUDED_ELEMENTS,
    INLINE_ELEMENTS,
    KNOWN_ELEMENTS,
    LANG_TOKEN_PATTERN,
    MEMORY_STATUSES,
    MEMORY_TYPES,
    META_NAMES,
    META_PREFIX,
    REPEATABLE_META,
    REQUIRED_META,
    TASK_STATUSES,
    rel_of_token,
)
from headd.record import Chunk, Citation, EntityRow, Facet, Link, MemoryRecord

log = logging.getLogger(__name__)

_ISO_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)Z)?"
)
_LANG_TOKEN = re.compile(LANG_TOKEN_PATTERN)
_JS_DECIMAL = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)", re.ASCII
)
_JS_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)
_MAX_SAFE_INTEGER = 2**53 - 1
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")

# Element flags, set while walking: where an element sits.
_IN_HEAD = 1
_IN_ARTICLE = 2
_IN_FIGURE = 4


def is_valid_datetime(value: str) -> bool:
    """``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ssZ``, a real calendar date (sorts as a string).

    Years below 100 are refused, as memhtml's ``Date.UTC`` probe refuses them (it maps 0..99 to
    1900..1999, so the round trip fails).
    """
    match = _ISO_DATETIME.fullmatch(value)
    if match is None:
        return False
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    if year < 100 or not 1 <= month <= 12 or day < 1:
        return False
    return day <= calendar.monthrange(year, month)[1]


def js_number(raw: str) -> float:
    """JavaScript's ``Number(string)``: trimmed, blank -> 0, hex/octal/binary, ``Infinity``, NaN."""
    text = tx.js_trim(raw)
    if text == "":
        return 0.0
    if _JS_RADIX.fullmatch(text):
        base = {"x": 16, "o": 8, "b": 2}[text[1].lower()]
        return float(int(text[2:], base))
    if _JS_DECIMAL.fullmatch(text):
        if text.endswith("Infinity"):
            return -math.inf if text.startswith("-") else math.inf
        return float(text)
    return math.nan


@dataclass(slots=True)
class _Element:
    """One element of the parsed document, with what the checks need to know about it.

    ``start``/``end`` delimit the element's text segments (its own block edges included) in
    the document's segment list, so any element's text is a slice, not another tree walk.
    """

    node: Any
    tag: str
    attrs: dict[str, str | None]
    flags: int
    start: int
    index: int
    parent: int
    end: int = 0
    last: int = 0
    in_pre: bool = False
    child_flags: int = 0

    def contains(self, other: _Element) -> bool:
        """True when ``other`` is this element or one of its descendants."""
        return self.index <= other.index <= self.last


@dataclass(slots=True)
class _Document:
    """The document as one ordered element list, its text segments, and direct handles."""

    elements: list[_Element] = field(default_factory=list)
    articles: list[_Element] = field(default_factory=list)
    titles: list[_Element] = field(default_factory=list)
    metas: list[tuple[str, str]] = field(default_factory=list)
    links: list[_Element] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    verbatims: list[bool] = field(default_factory=list)

    def text_of(self, element: _Element) -> str:
        """memhtml's ``textContent``: collapsed, trimmed (``<pre>`` collapses here too)."""
        return tx.collapse_ascii("".join(self.texts[element.start : element.end]))

    def claim_canonical(self, mark: _Element) -> str:
        """The mark's canonical text without ``<pre>``/``<code>`` subtrees (the gist rule)."""
        inner = self.elements[mark.index + 1 : mark.last + 1]
        if any(e.tag in GIST_EXCLUDED_ELEMENTS for e in inner):
            return tx.canonical_text(mark.node, exclude_code=True)
        return self.canonical_of(mark)

    def canonical_of(self, element: _Element) -> str:
        """The canonical (hash) text of an element's subtree."""
        if element.in_pre:  # memhtml starts a subtree walk outside any <pre>: walk afresh
            return tx.canonical_text(element.node)
        return tx.render_segments(
            self.verbatims[element.start : element.end], self.texts[element.start : element.end]
        )


def _collect(root: Any) -> _Document:
    """Walk the document once, in document order: elements and text segments.

    Lexbor's own ``traverse`` drives the walk (in C, no recursion); the structure comes from
    each node's parent id, closing every open element the walk has left. That is what lets a
    whole file cost one pass.
    """
    doc = _Document()
    elements = doc.elements
    texts = doc.texts
    verbatims = doc.verbatims
    inline = INLINE_ELEMENTS
    head_seen = False
    open_ids: list[int] = []  # mem_id of each open element, innermost last
    open_elements: list[_Element] = []
    pre_depth = 0

    def close_to(parent_id: int) -> int:
        depth = pre_depth
        while open_ids and open_ids[-1] != parent_id:
            open_ids.pop()
            done = open_elements.pop()
            if done.tag not in inline:
                texts.append(" ")
                verbatims.append(False)
            done.end = len(texts)
            done.last = len(elements) - 1
            if done.tag == "pre":
                depth -= 1
        return depth

    title_just_opened = False
    for node in root.traverse(include_text=True):
        tag = node.tag
        if tag == "-text":
            # Inside the head, text outside <title> can only be whitespace (the HTML parser
            # moves any other text to the body, opening <body> first) or raw text of a
            # forbidden element: nothing reads it, so it costs no parent lookup.
            if not title_just_opened and open_elements and open_elements[-1].child_flags & _IN_HEAD:
                continue
            title_just_opened = False
            parent = node.parent
            parent_id = parent.mem_id if parent is not None else -1
            if open_ids and open_ids[-1] != parent_id:
                pre_depth = close_to(parent_id)
            texts.append(node.text_content or "")
            verbatims.append(pre_depth > 0)
            continue
        title_just_opened = False
        if not tag or tag[0] == "-" or tag[0] == "!":
            continue
        if open_ids:
            parent = node.parent
            parent_id = parent.mem_id if parent is not None else -1
            if open_ids[-1] != parent_id:
                pre_depth = close_to(parent_id)
        parent_index = open_elements[-1].index if open_elements else -1
        flags = open_elements[-1].child_flags if open_elements else 0
        attrs = node.attributes
        index = len(elements)
        element = _Element(
            node, tag, attrs, flags, len(texts), index, parent_index, in_pre=pre_depth > 0
        )
        if tag not in inline:
            texts.append(" ")
            verbatims.append(False)
        elements.append(element)
        open_ids.append(node.mem_id)
        open_elements.append(element)
        child_flags = flags
        if tag == "head" and not head_seen:
            head_seen = True
            child_flags |= _IN_HEAD
        elif tag == "article":
            doc.articles.append(element)
            child_flags |= _IN_ARTICLE
        elif tag == "figure":
            child_flags |= _IN_FIGURE
        elif tag == "pre":
            pre_depth += 1
        elif tag == "title":
            doc.titles.append(element)
            title_just_opened = True
        elif flags & _IN_HEAD:
            if tag == "meta":
                if "name" in attrs:
                    doc.metas.append((attrs["name"] or "", attrs.get("content") or ""))
            elif tag == "link":
                doc.links.append(element)
        element.child_flags = child_flags
    close_to(-2)
    return doc


def _attr(element: _Element, name: str) -> str | None:
    """An attribute's value ("" for a bare attribute), or None when absent."""
    attrs = element.attrs
    if name not in attrs:
        return None
    value = attrs[name]
    return "" if value is None else value


def _direct_text(node: Any) -> str:
    """Direct text children joined and trimmed, cut to 40 (for messages, as memhtml does)."""
    parts: list[str] = []
    child = node.child
    while child is not None:
        if child.tag == "-text":
            parts.append(child.text_content or "")
        child = child.next
    return tx.js_trim("".join(parts))[:40]


def _has_ancestor(doc: _Document, element: _Element, tag: str) -> bool:
    parent = element.parent
    while parent >= 0:
        ancestor = doc.elements[parent]
        if ancestor.tag == tag:
            return True
        parent = ancestor.parent
    return False


def _is_root_relative(href: str) -> bool:
    if not href.startswith("/") or href.startswith("//"):
        return False
    path = _QUERY_OR_FRAGMENT.split(href, maxsplit=1)[0]
    return all(segment not in ("", ".", "..") for segment in path[1:].split("/"))


# --- the checks (constraint order, then document order, as memhtml reports them) -----------


def _check_head(doc: _Document) -> list[str]:
    out: list[str] = []
    if len(doc.titles) != 1:
        out.append(f"{len(doc.titles)} <title> elements: a memory file needs exactly one")
    elif _direct_text(doc.titles[0].node) == "":
        out.append("empty <title>")
    counts: dict[str, int] = {}
    for name, _ in doc.metas:
        counts[name] = counts.get(name, 0) + 1
    for required in REQUIRED_META:
        if counts.get(required, 0) == 0:
            out.append(f'missing required <meta name="{required}">')
    for name, count in counts.items():
        if not name.startswith(META_PREFIX):
            continue
        if name not in META_NAMES:
            out.append(f'<meta name="{name}"> is outside the closed metadata vocabulary')
            continue
        if count > 1 and name not in REPEATABLE_META:
            out.append(f'<meta name="{name}"> appears {count} times but is not repeatable')
    return out


def _check_article(doc: _Document) -> list[str]:
    if not doc.articles:
        return ["no <article>: a memory file needs exactly one"]
    if len(doc.articles) > 1:
        return [f"{len(doc.articles)} <article> elements: a memory file needs exactly one"]
    return []


def _check_mark(article: _Element, doc: _Document) -> list[str]:
    marks = [e for e in doc.elements if e.tag == "mark" and e.flags & _IN_ARTICLE]
    if not marks:
        return ["no <mark>: the claim span is required"]
    if len(marks) > 1:
        return [f"{len(marks)} <mark> elements: exactly one span is the claim"]
    out: list[str] = []
    if tx.js_trim(doc.claim_canonical(marks[0])) == "":
        out.append("empty <mark>: the claim span must say something")
    folded: list[str] = []
    if _has_ancestor(doc, marks[0], "aside"):
        folded.append("<mark> inside <aside>: the claim is never a caveat")
    if _has_ancestor(doc, marks[0], "details"):
        folded.append("<mark> inside <details>: the claim is never behind a fold")
    if folded:
        return out + folded
    first_block = next(
        (e for e in doc.elements if e.tag in ("p", "li") and e.flags & _IN_ARTICLE), None
    )
    if first_block is None:
        out.append("<mark> outside any <p> or <li>: the claim must lead a paragraph or list item")
    elif not first_block.contains(marks[0]):
        out.append(f"<mark> not in the first <{first_block.tag}>: the claim must lead the article")
    return out


def _check_times(doc: _Document) -> list[str]:
    out: list[str] = []
    for element in doc.elements:
        if element.tag != "time":
            continue
        value = _attr(element, "datetime")
        if value is None:
            out.append(f'<time> without datetime: "{_direct_text(element.node)}"')
        elif not is_valid_datetime(value):
            out.append(f'<time datetime="{value}"> is not an ISO date or datetime')
    return out


def _check_presentation(doc: _Document) -> list[str]:
    out: list[str] = []
    for element in doc.elements:
        tag = element.tag
        if tag in FORBIDDEN_ELEMENTS:
            out.append(f"<{tag}> is forbidden: a memory file does not execute or style")
        for name in element.attrs:
            lowered = name.lower()
            if lowered in FORBIDDEN_ATTRIBUTES:
                out.append(f"{lowered} attribute on <{tag}>: presentation is not memory")
            elif lowered.startswith(EVENT_HANDLER_PREFIX) and len(lowered) > len(
                EVENT_HANDLER_PREFIX
            ):
                out.append(f"{lowered} handler on <{tag}>: a memory file does not execute")
    return out


def _check_links(doc: _Document) -> list[str]:
    out: list[str] = []
    for element in doc.links:
        rel = _attr(element, "rel")
        if rel is None or not rel.startswith(META_PREFIX):
            continue
        href = _attr(element, "href")
        if rel_of_token(rel) is None:
            out.append(f'<link rel="{rel}"> is outside the closed edge vocabulary')
        if href is None or href == "":
            out.append(f'<link rel="{rel}"> without href')
        elif not _is_root_relative(href):
            out.append(f'<link rel="{rel}" href="{href}"> is not repo-root-relative')
    return out


def _check_metas(metas: dict[str, str]) -> list[str]:
    out: list[str] = []
    raw_type = metas.get("memhtml-type")
    memory_type = raw_type if raw_type in MEMORY_TYPES else None
    if raw_type is not None and memory_type is None:
        out.append(
            f'<meta name="memhtml-type" content="{raw_type}"> is outside the type vocabulary'
        )
    raw_status = metas.get("memhtml-status")
    if raw_status is not None and raw_status not in MEMORY_STATUSES:
        out.append(
            f'<meta name="memhtml-status" content="{raw_status}"> is neither active nor archived'
        )
    task_status = metas.get("memhtml-task-status")
    is_task = memory_type == "task"
    if task_status is not None and not is_task:
        out.append(
            f'<meta name="memhtml-task-status"> on a {memory_type or "typeless"} memory: '
            "only a task carries one"
        )
    if task_status is not None and task_status not in TASK_STATUSES:
        out.append(
            f'<meta name="memhtml-task-status" content="{task_status}"> is outside the '
            f"vocabulary: {', '.join(TASK_STATUSES)}"
        )
    if is_task and task_status is None:
        out.append('a task requires <meta name="memhtml-task-status">')
    due = metas.get("memhtml-due")
    if due is not None and not is_valid_datetime(due):
        out.append(f'<meta name="memhtml-due" content="{due}"> is not an ISO date or datetime')
    for name in DATETIME_METAS:
        value = metas.get(name)
        if value is not None and not is_valid_datetime(value):
            out.append(f'<meta name="{name}" content="{value}"> is not an ISO date or datetime')
    return out


def _warnings(doc: _Document) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []

    def push(key: str, message: str) -> None:
        if key not in seen:
            seen.add(key)
            out.append(message)

    for element in doc.elements:
        tag = element.tag
        lang = _attr(element, "data-lang")
        if lang is not None and _LANG_TOKEN.fullmatch(lang) is None:
            push(f"lang:{lang}", f'data-lang="{lang}" is not a language token')
        if tag in FIGURE_SCOPED_ELEMENTS:
            if not element.flags & _IN_FIGURE:
                push(f"scoped:{tag}", f"<{tag}> outside a <figure>: use a semantic element instead")
            continue
        if tag not in KNOWN_ELEMENTS:
            push(f"unknown:{tag}", f"<{tag}> is outside the closed vocabulary")
    return out


# --- extraction -----------------------------------------------------------------------------


def _bounded(raw: str | None, low: float, high: float, integral: bool) -> float | None:
    if raw is None or tx.js_trim(raw) == "":
        return None  # a blank value stated no number (JavaScript would read it as 0)
    value = js_number(raw)
    if not math.isfinite(value) or value < low or value > high:
        return None
    if integral and not value.is_integer():
        return None
    return value


def _first_finite_data(dd: _Element, elements: list[_Element]) -> float | None:
    """The first ``<data value>`` under a ``<dd>`` that ``Number()`` reads as finite."""
    for element in elements[dd.index + 1 : dd.last + 1]:
        if element.tag != "data":
            continue
        raw = _attr(element, "value")
        if raw is None or tx.js_trim(raw) == "":
            continue
        value = js_number(raw)
        if math.isfinite(value):
            return value
    return None


def _decode(path: str, html: str | bytes) -> tuple[str, bytes]:
    """The text and its exact UTF-8 bytes, or InvalidMemory naming why the input is not text."""
    if isinstance(html, str):
        try:
            return html, html.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidMemory(
                path,
                [f"text is not valid Unicode: lone surrogate at character {exc.start}"],
            ) from None
    raw = bytes(html)
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError as exc:
        raise InvalidMemory(
            path, [f"file is not valid UTF-8: invalid byte at offset {exc.start}"]
        ) from None


def parse_memory(path: str, html: str | bytes) -> MemoryRecord:
    """Parse one memory file at ``path`` (repo-relative) into a record, or raise InvalidMemory.

    Every violation is collected into the one error; warnings ride on the record.
    """
    text, raw = _decode(path, html)
    try:
        return _parse(path, text, raw)
    except InvalidMemory:
        raise
    except Exception as exc:  # the parser is total: any other failure is a refusal, logged
        log.exception("parser failure on %s", path)
        raise InvalidMemory(path, [f"unparseable memory file ({type(exc).__name__})"]) from exc


def _parse(path: str, text: str, raw: bytes) -> MemoryRecord:
    doc = _document_of(text)
    violations, first_meta = _violations(doc)
    if violations:
        raise InvalidMemory(path, violations)
    if len(doc.articles) != 1:  # unreachable once the checks pass; keeps the types honest
        raise InvalidMemory(path, ["no <article>: a memory file needs exactly one"])
    return _build(path, text, raw, doc, doc.articles[0], first_meta)


def _document_of(text: str) -> _Document:
    source = text[1:] if text.startswith("\ufeff") else text
    root = LexborHTMLParser(source).root
    return _collect(root) if root is not None else _Document()


def _violations(doc: _Document) -> tuple[list[str], dict[str, str]]:
    """Every violation in memhtml's order (structure, then head metas), and the first metas."""
    violations = _check_head(doc) + _check_article(doc)
    if len(doc.articles) == 1:
        violations += _check_mark(doc.articles[0], doc)
    violations += _check_times(doc) + _check_presentation(doc) + _check_links(doc)
    first_meta: dict[str, str] = {}
    for name, content in doc.metas:
        first_meta.setdefault(name, content)
    violations += _check_metas(first_meta)
    return violations, first_meta


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What ``headctl check`` reports for one file: the record when valid, else the violations."""

    record: MemoryRecord | None
    violations: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.record is not None


def check_memory(path: str, html: str | bytes) -> CheckResult:
    """Parse and check without raising: the record, or every violation plus the warnings.

    Warnings are reported for an invalid file too, so one check tells an author everything.
    """
    try:
        record = parse_memory(path, html)
    except InvalidMemory as exc:
        warnings: tuple[str, ...] = ()
        try:
            text = html if isinstance(html, str) else bytes(html).decode("utf-8")
            text.encode("utf-8")
            warnings = tuple(_warnings(_document_of(text)))
        except Exception:  # undecodable input has no document to warn about
            warnings = ()
        return CheckResult(record=None, violations=exc.violations, warnings=warnings)
    return CheckResult(record=record, violations=(), warnings=record.warnings)


def _build(
    path: str,
    text: str,
    raw: bytes,
    doc: _Document,
    article: _Element,
    metas: dict[str, str],
) -> MemoryRecord:
    norm_path = tx.normalize_path(path)
    in_article = [e for e in doc.elements if e.flags & _IN_ARTICLE]

    title = doc.text_of(doc.titles[0]) if doc.titles else ""
    canonical = doc.canonical_of(article)  # once: the hash and the body text share it
    body_text = tx.collapse_ascii(canonical)
    mark = next(e for e in in_article if e.tag == "mark")
    gist = tx.collapse_ascii(doc.claim_canonical(mark))
    time = next((e for e in in_article if e.tag == "time"), None)
    event_at = _attr(time, "datetime") if time is not None else None

    # Facets: every <dd> under the latest <dt> of each <dl>, in document order.
    raw_facets: list[tuple[str, str, float | None]] = []
    elements = doc.elements
    for dl in (e for e in in_article if e.tag == "dl"):
        name: str | None = None
        for child in elements[dl.index + 1 : dl.last + 1]:
            if child.parent != dl.index:
                continue
            if child.tag == "dt":
                name = doc.text_of(child)
            elif child.tag == "dd" and name is not None:
                raw_facets.append((name, doc.text_of(child), _first_finite_data(child, elements)))

    raw_citations: list[tuple[str, str | None]] = []
    summaries: list[str] = []
    terms: list[str] = []
    langs: list[str] = []
    for element in in_article:
        tag = element.tag
        if tag == "cite" or tag == "q":
            cite_text = doc.text_of(element)
            if cite_text:
                raw_citations.append((cite_text, _attr(element, "cite") if tag == "q" else None))
        elif tag == "summary":
            summary = doc.text_of(element)
            if summary:
                summaries.append(summary)
        elif tag == "dfn":
            term = doc.text_of(element)
            if term:
                terms.append(term)
        if tag == "code":
            lang = _attr(element, "data-lang")
            if lang is not None and tx.js_trim(lang) != "":
                langs.append(tx.js_trim(lang).lower())

    def repeated(meta_name: str) -> list[str]:
        return [c for n, c in doc.metas if n == meta_name and c != ""]

    raw_entities = repeated("memhtml-entity")
    entities = _unique(tx.js_trim(e) for e in raw_entities)
    tags = _unique(tx.js_trim(t) for t in repeated("memhtml-tag"))
    aliases = _unique(tx.js_trim(a) for a in repeated("memhtml-alias"))

    links: list[Link] = []
    seen_edges: set[tuple[str, str]] = set()
    for element in doc.links:
        token = _attr(element, "rel")
        href = _attr(element, "href")
        if token is None or href is None:
            continue
        rel = rel_of_token(token)
        if rel is None:
            continue
        dst = tx.normalize_path(href)
        if dst == "" or dst == norm_path or (rel, dst) in seen_edges:
            continue
        seen_edges.add((rel, dst))
        links.append(Link(rel=rel, href=href))

    facets = tuple(
        Facet(name=n, value=v, numeric_value=num)
        for n, v, num in _unique_by(raw_facets, lambda f: f[0] + "\0" + f[1])
    )
    citations = tuple(
        Citation(text=t, href=h) for t, h in _unique_by(raw_citations, lambda c: c[0])
    )

    content_hash = digest_of(canonical)
    para = tx.para_of(norm_path) or "areas"
    archived = para == "archive"
    memory_type = metas["memhtml-type"]
    confidence = _bounded(metas.get("memhtml-confidence"), 0, 1, False)
    importance = _bounded(metas.get("memhtml-importance"), 1, 10, True)
    reprieves = _bounded(metas.get("memhtml-reprieves"), 0, _MAX_SAFE_INTEGER, True)
    needs_revision = metas.get("memhtml-needs-revision")
    task_status = metas.get("memhtml-task-status")

    return MemoryRecord(
        path=norm_path,
        html=text,
        blob_sha=blob_sha_of(raw),
        content_hash=content_hash,
        meta_content_hash=metas.get("memhtml-content-hash"),
        memory_type=memory_type,
        status=metas["memhtml-status"],
        title=title,
        claim=gist,
        body_text=body_text,
        fts_text=tx.fts_text_of(title, gist, body_text),
        disclosure_text=tx.disclosure_text_of(
            gist, summaries, [(n, v) for n, v, _ in raw_facets], [t for t, _ in raw_citations]
        ),
        word_count=tx.word_count_of(body_text),
        tags=tags,
        entities=entities,
        entity_rows=tuple(
            EntityRow(entity_type=t, entity_name=n)
            for t, n in tx.entity_rows_of(raw_entities, terms, langs)
        ),
        aliases=aliases,
        links=tuple(links),
        facets=facets,
        citations=citations,
        chunks=tuple(
            Chunk(ordinal=i, text=chunk, char_count=count)
            for i, (chunk, count) in enumerate(tx.chunk_text(body_text))
        ),
        event_at=event_at,
        created_at=metas.get("memhtml-created"),
        updated_at=metas.get("memhtml-updated"),
        archived_at=metas.get("memhtml-archived"),
        valid_from=metas.get("memhtml-valid-from"),
        valid_until=metas.get("memhtml-valid-until"),
        superseded_by=metas.get("memhtml-superseded-by"),
        archived=archived,
        origin_path=tx.origin_path_of(norm_path) if archived else None,
        para=para,
        workspace=tx.workspace_of(norm_path),
        frame_key=frame_key_of(gist),
        importance=int(importance) if importance is not None else 5,
        confidence=float(confidence) if confidence is not None else 1.0,
        reprieves=int(reprieves) if reprieves is not None else 0,
        needs_revision=(
            needs_revision is not None and needs_revision.lower() in ("true", "1", "yes")
        ),
        author=metas.get("memhtml-author", "agent"),
        session_id=metas.get("memhtml-session"),
        prompt_id=metas.get("memhtml-prompt"),
        turn_uuid=metas.get("memhtml-turn"),
        task_status=task_status if memory_type == "task" else None,
        due=metas.get("memhtml-due"),
        warnings=tuple(_warnings(doc)),
    )


def _unique(values: Any) -> tuple[str, ...]:
    """Non-empty values, first occurrence kept, order kept."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if value and value not in seen:
            seen.add(value)
            out.append(value)
    return tuple(out)


def _unique_by(items: list[Any], key: Any) -> list[Any]:
    seen: set[str] = set()
    out: list[Any] = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
