"""The parsed document: one walk that collects text segments, the few elements that matter, and
every per-element finding of the checks.

Lexbor (selectolax) builds the HTML5 tree in C; one Python pass over it (each open element's
``iter`` drives it, so the structure is the walk's own and no node is asked for its parent; an
element's tag picks a precomputed plan in one lookup) appends every text node as a segment
and every block edge as a collapsible space, and does at each element, right there, the checks
that look at every element (forbidden elements and attributes, ``<time>`` values, warnings). Only
the elements a later rule reads (title, article, mark, the first ``<p>``/``<li>``, facets,
citations, ``<pre>``/``<code>`` …) become :class:`Element` records, each knowing the slice of
segments its subtree covers and the range of records under it, so nothing walks the tree again.
The per-node work is what the parse costs (Lexbor itself is a tenth of it), so the loop is kept
flat: no per-node objects beyond one tuple (with its iterator) per open element.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from selectolax.lexbor import LexborHTMLParser

from headd.memfile import text as tx
from headd.memfile.vocabulary import (
    EVENT_HANDLER_PREFIX,
    FIGURE_SCOPED_ELEMENTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_ELEMENTS,
    GIST_EXCLUDED_ELEMENTS,
    INLINE_ELEMENTS,
    KNOWN_ELEMENTS,
    LANG_TOKEN_PATTERN,
)

# Element flags, inherited down the tree: where an element sits.
IN_HEAD = 1
IN_ARTICLE = 2
IN_FIGURE = 4
IN_ASIDE = 8
IN_DETAILS = 16

#: Known elements that need no per-tag warning (``div``/``span`` warn outside a figure).
_PLAIN_KNOWN: Final = KNOWN_ELEMENTS - FIGURE_SCOPED_ELEMENTS

# How an open element closes (second item of a stack entry): nothing, a block edge, a block
# edge that ends a <pre>, a phantom (no edge), a <textarea> (block edge; its children are text).
_CLOSE_INLINE = 0
_CLOSE_BLOCK = 1
_CLOSE_PRE = 2
_CLOSE_PHANTOM = 3
_CLOSE_TEXTAREA = 4

# Tags the walk does something for, beyond the generic checks (0: nothing special).
_HEAD, _ARTICLE, _FIGURE, _PRE, _TITLE, _HEAD_VOID, _ASIDE, _DETAILS, _TEXTAREA = range(1, 10)
_TIME, _MARK, _BLOCK, _DL, _FACET, _QUOTE, _SUMMARY, _DFN, _CODE = range(10, 19)
_SPECIAL: Final[dict[str, int]] = {
    "head": _HEAD,
    "article": _ARTICLE,
    "figure": _FIGURE,
    "pre": _PRE,
    "title": _TITLE,
    "meta": _HEAD_VOID,  # in the head: a void element read right there
    "link": _HEAD_VOID,
    "aside": _ASIDE,
    "details": _DETAILS,
    "textarea": _TEXTAREA,
    "time": _TIME,
    "mark": _MARK,
    "p": _BLOCK,
    "li": _BLOCK,
    "dl": _DL,
    "dt": _FACET,
    "dd": _FACET,
    "data": _FACET,
    "cite": _QUOTE,
    "q": _QUOTE,
    "summary": _SUMMARY,
    "dfn": _DFN,
    "code": _CODE,
}

# The warning an element's tag earns (the third item of a plan).
_WARN_NONE, _WARN_FORBIDDEN, _WARN_SCOPED, _WARN_UNKNOWN = range(4)


def _plan_of(tag: str) -> tuple[int, int, int]:
    """What the walk does at an element: (its kind, 0 for none; how it closes; its warning)."""
    kind = _SPECIAL.get(tag, 0)
    closing = _CLOSE_INLINE if tag in INLINE_ELEMENTS else _CLOSE_BLOCK
    if tag in _PLAIN_KNOWN:
        warning = _WARN_NONE
    elif tag in FORBIDDEN_ELEMENTS:
        warning = _WARN_FORBIDDEN
    elif tag in FIGURE_SCOPED_ELEMENTS:
        warning = _WARN_SCOPED
    else:
        warning = _WARN_UNKNOWN
    return kind, closing, warning


#: The plan of every tag a memory file is expected to hold, worked out once (others: per use).
_PLANS: Final[dict[str, tuple[int, int, int]]] = {
    tag: _plan_of(tag) for tag in (*_SPECIAL, *KNOWN_ELEMENTS, *FORBIDDEN_ELEMENTS, "br", "hr")
}

_ON_LEN: Final = len(EVENT_HANDLER_PREFIX)
#: HTML's ASCII whitespace: what the canonical text collapses (not JavaScript's wider set).
_HTML_SPACE: Final = " \t\n\f\r"
#: A parent id no node has: closing "until" it closes every open element.
_NO_NODE: Final = -2
_LANG_TOKEN: Final = re.compile(LANG_TOKEN_PATTERN)
#: Attribute names memory files use that the presentation rule can never refuse (lowercase, not
#: forbidden, no handler): an element carrying only these skips the per-attribute check.
_HARMLESS_ATTRIBUTES: Final = frozenset(
    (
        "name",
        "content",
        "charset",
        "lang",
        "rel",
        "href",
        "datetime",
        "value",
        "cite",
        "title",
        "id",
        "data-lang",
        "open",
        "colspan",
        "rowspan",
        "scope",
        "start",
        "reversed",
        "type",
        "dir",
        "translate",
        "hreflang",
        "headers",
        "abbr",
    )
)
if any(
    name in FORBIDDEN_ATTRIBUTES or name.startswith(EVENT_HANDLER_PREFIX) or name != name.lower()
    for name in _HARMLESS_ATTRIBUTES
):  # pragma: no cover - a vocabulary edit that makes a "harmless" name refusable
    raise RuntimeError("a harmless attribute name is one the presentation rule refuses")


@dataclass(slots=True)
class Element:
    """One element a rule reads, with where it sits and the text segments it covers.

    ``start``/``end`` delimit the element's text segments (its own block edges included) in
    the document's segment list; ``index``/``last`` delimit the records of its subtree (itself
    and every recorded descendant) in the document's record list; ``parent`` is the parent's
    record when the parent is recorded too.
    """

    node: Any
    tag: str
    attrs: dict[str, str | None]
    flags: int
    start: int
    index: int
    parent: Element | None
    end: int = 0
    last: int = 0
    in_pre: bool = False

    def contains(self, other: Element) -> bool:
        """True when ``other`` is this element or one of its recorded descendants."""
        return self.index <= other.index <= self.last


@dataclass(slots=True, init=False)
class Document:
    """What the checks and the record builder read, all collected by the one walk.

    ``elements`` holds only the recorded elements (see the module docstring), in document
    order; ``marks``, ``quotes`` (``<cite>`` and ``<q>``), ``summaries``, ``dfns``, ``dls`` and
    ``first_block`` are the in-article ones. ``verbatim_at`` lists the segments that are
    ``<pre>`` text (kept byte for byte in the canonical text), in ascending order.
    """

    elements: list[Element]
    articles: list[Element]
    titles: list[Element]
    metas: list[tuple[str, str]]
    links: list[tuple[str | None, str | None]]
    texts: list[str]
    verbatim_at: list[int]
    marks: list[Element]
    first_block: Element | None
    event_at: str | None
    dls: list[Element]
    quotes: list[Element]
    summaries: list[Element]
    dfns: list[Element]
    langs: list[str]
    time_violations: list[str]
    presentation_violations: list[str]
    warnings: list[str]
    claims: dict[int, str]  # claim_text, by mark index

    def __init__(self) -> None:
        """An empty document (one per parse: plain literals, no per-field factory calls)."""
        self.elements = []
        self.articles = []
        self.titles = []
        self.metas = []
        self.links = []
        self.texts = []
        self.verbatim_at = []
        self.marks = []
        self.first_block = None
        self.event_at = None
        self.dls = []
        self.quotes = []
        self.summaries = []
        self.dfns = []
        self.langs = []
        self.time_violations = []
        self.presentation_violations = []
        self.warnings = []
        self.claims = {}

    def text_of(self, element: Element) -> str:
        """memhtml's ``textContent``: collapsed, trimmed (``<pre>`` collapses here too)."""
        return tx.collapse_ascii("".join(self.texts[element.start : element.end]))

    def claim_text(self, mark: Element) -> str:
        """The gist: the mark's text without ``<pre>``/``<code>`` subtrees, collapsed, trimmed.

        Read from the segments, skipping the slices of the excluded elements, so it sees the
        tree memhtml sees (a phantom element inside a textarea is not a ``<code>`` here).
        Computed once (the mark check and the record both read it).
        """
        claim = self.claims.get(mark.index)
        if claim is None:
            claim = self.claims[mark.index] = self._claim_text(mark)
        return claim

    def _claim_text(self, mark: Element) -> str:
        if mark.last == mark.index:  # nothing recorded inside: no <pre>/<code> to leave out
            return self.text_of(mark)
        parts: list[str] = []
        at = mark.start
        for inner in self.elements[mark.index + 1 : mark.last + 1]:
            if inner.tag in GIST_EXCLUDED_ELEMENTS and inner.start >= at:
                parts.extend(self.texts[at : inner.start])
                at = inner.end
        parts.extend(self.texts[at : mark.end])
        return tx.collapse_ascii("".join(parts))

    def canonical_and_text_of(self, element: Element) -> tuple[str, str]:
        """The canonical (hash) text of an element's subtree and its searchable text.

        The searchable text is the canonical text fully collapsed (``<pre>`` too) and trimmed;
        without ``<pre>`` text the canonical text is already collapsed, so only the trim is left.
        """
        if element.in_pre:  # memhtml starts a subtree walk outside any <pre>: walk afresh
            canonical = tx.canonical_text(element.node)
            return canonical, tx.collapse_ascii(canonical)
        start, end = element.start, element.end
        texts = self.texts[start:end]
        inside = [at - start for at in self.verbatim_at if start <= at < end]
        if not inside:
            canonical = tx.render_segments((), texts)
            return canonical, tx.js_trim(canonical)
        verbatims = [False] * len(texts)
        for at in inside:
            verbatims[at] = True
        canonical = tx.render_segments(verbatims, texts)
        return canonical, tx.collapse_ascii(canonical)


def collect(root: Any) -> Document:
    """Walk the document once, in document order (see the module docstring).

    The structure comes from the walk itself: every open element holds the iterator over its
    children (Lexbor's ``iter``, driven in C), so a node's parent is the innermost open element
    and an element closes (its end edge written, its ranges set) when its iterator runs out; no
    node is asked for its parent. The children of the head are iterated without their text
    nodes of ASCII whitespace only, which Lexbor skips in C (the walk ignores the head's text
    outside ``<title>``, and a whitespace-only title reads as an empty one either way). Lexbor
    reconstructs active formatting elements (a ``<code>`` closed early by a block end tag, say)
    inside a ``<textarea>``, which the HTML standard and parse5 do not; elements found inside
    one are walked as "phantoms": their text counts, they don't.

    Collapsible whitespace is written once: an edge, or a text of ASCII whitespace only, that
    follows a segment ending in collapsible whitespace is dropped (every reader collapses such
    runs to one space and trims the ends of what it reads, so the dropped segment changes no
    result), which leaves the article's text with almost nothing to collapse. Verbatim
    (``<pre>``) text, and the close of a ``<pre>``/``<code>`` (the gist skips their segments),
    end a run, so no segment is dropped on the strength of one a reader may skip. The head's
    metas and links write no segment at all: no reader looks at the head's text outside
    ``<title>``; text is skipped from the head's first element until the next element outside
    it (the whitespace between ``</head>`` and ``<body>`` included), the title's own text aside.
    """
    doc = Document()
    elements = doc.elements
    texts = doc.texts
    add_text = texts.append
    verbatim_at = doc.verbatim_at
    presentation = doc.presentation_violations
    add_meta = doc.metas.append
    add_link = doc.links.append
    add_element = elements.append
    warn_seen: set[str] = set()
    plans = _PLANS
    harmless = _HARMLESS_ATTRIBUTES
    html_space = _HTML_SPACE
    # Open elements, innermost last: (iterator over its children, how it closes, the flags its
    # children get, its record). The first entry stands for the document: it yields the root.
    stack: list[tuple[Any, int, int, Element | None]] = [(iter((root,)), _CLOSE_INLINE, 0, None)]
    push = stack.append
    pre_depth = 0
    after_space = False  # the last segment written ends in collapsible whitespace
    head_seen = False
    time_seen = False
    title_just_opened = False
    in_head_text = False  # text here is the head's (or follows it): skipped but for the title's

    while stack:
        entry = stack[-1]
        flags = entry[2]
        parent_record = entry[3]
        in_phantom = entry[1] >= _CLOSE_PHANTOM  # inside a textarea: elements are phantoms
        in_head = (flags & IN_HEAD) != 0
        for node in entry[0]:
            tag = node.tag
            if tag == "-text":
                if in_head_text and not title_just_opened:
                    continue
                title_just_opened = False
                in_head_text = in_head
                content = node.text_content or ""
                if pre_depth:
                    verbatim_at.append(len(texts))
                    add_text(content)
                    after_space = False
                elif content.isspace() and not content.strip(html_space):
                    if not after_space:  # collapsible whitespace only: one space, if any
                        add_text(" ")
                        after_space = True
                else:
                    add_text(content)
                    after_space = False
                continue
            title_just_opened = False
            plan = plans.get(tag)
            if plan is None:
                if not tag or tag[0] == "-" or tag[0] == "!":
                    continue  # a comment, the doctype: no element
                plan = _plan_of(tag)
            if in_phantom:
                push((node.iter(True, in_head), _CLOSE_PHANTOM, flags, None))
                in_head_text = in_head
                break
            kind, closing, tag_warning = plan

            # The checks every element gets: forbidden elements and attributes, warnings.
            if tag_warning == _WARN_FORBIDDEN:
                presentation.append(
                    f"<{tag}> is forbidden: a memory file does not execute or style"
                )
            attrs = node.attributes
            if attrs:
                if not harmless.issuperset(attrs):
                    _check_attributes(tag, attrs, presentation)
                if "data-lang" in attrs:
                    lang = attrs["data-lang"] or ""
                    if _LANG_TOKEN.fullmatch(lang) is None and f"lang:{lang}" not in warn_seen:
                        warn_seen.add(f"lang:{lang}")
                        doc.warnings.append(f'data-lang="{lang}" is not a language token')
            if kind == _HEAD_VOID and flags & IN_HEAD:
                # A void element of the head: no children, no segment (nothing reads the head's
                # text outside <title>), so it never goes on the open-element stack.
                if tag == "meta":
                    if "name" in attrs:
                        add_meta((attrs["name"] or "", attrs.get("content") or ""))
                else:
                    add_link((_attr(attrs, "rel"), _attr(attrs, "href")))
                continue
            if tag_warning:
                _warn_tag(tag, tag_warning, flags, warn_seen, doc.warnings)

            start = len(texts)
            if closing and not after_space:
                add_text(" ")
                after_space = True
            child_flags = flags
            record: Element | None = None
            if kind:
                in_article = flags & IN_ARTICLE
                if kind >= _TIME:  # article vocabulary: recorded inside an article only
                    if kind == _TIME:
                        value = _attr(attrs, "datetime")
                        if value is None:
                            doc.time_violations.append(
                                f'<time> without datetime: "{direct_text(node)}"'
                            )
                        elif not tx.is_valid_datetime(value):
                            doc.time_violations.append(
                                f'<time datetime="{value}"> is not an ISO date or datetime'
                            )
                        if in_article and not time_seen:
                            time_seen = True
                            doc.event_at = value
                    elif in_article:
                        if kind == _BLOCK:
                            if doc.first_block is None:
                                record = Element(
                                    node, tag, attrs, flags, start, len(elements), parent_record
                                )
                                doc.first_block = record
                        else:
                            record = Element(
                                node, tag, attrs, flags, start, len(elements), parent_record
                            )
                            if kind == _MARK:
                                doc.marks.append(record)
                            elif kind == _FACET:
                                pass  # read through its <dl>
                            elif kind == _DL:
                                doc.dls.append(record)
                            elif kind == _QUOTE:
                                doc.quotes.append(record)
                            elif kind == _SUMMARY:
                                doc.summaries.append(record)
                            elif kind == _DFN:
                                doc.dfns.append(record)
                            elif kind == _CODE:
                                lang = _attr(attrs, "data-lang")
                                if lang is not None:
                                    lang = tx.js_trim(lang)
                                    if lang != "":
                                        doc.langs.append(lang.lower())
                elif kind == _HEAD:
                    if not head_seen:
                        head_seen = True
                        child_flags |= IN_HEAD
                elif kind == _ARTICLE:
                    record = Element(
                        node,
                        tag,
                        attrs,
                        flags,
                        start,
                        len(elements),
                        parent_record,
                        in_pre=pre_depth > 0,
                    )
                    doc.articles.append(record)
                    child_flags |= IN_ARTICLE
                elif kind == _PRE:
                    pre_depth += 1
                    closing = _CLOSE_PRE
                    if flags & IN_ARTICLE:  # the gist leaves <pre> out
                        record = Element(
                            node, tag, attrs, flags, start, len(elements), parent_record
                        )
                elif kind == _TITLE:
                    record = Element(node, tag, attrs, flags, start, len(elements), parent_record)
                    doc.titles.append(record)
                    title_just_opened = True
                elif kind == _FIGURE:
                    child_flags |= IN_FIGURE
                elif kind == _ASIDE:
                    child_flags |= IN_ASIDE
                elif kind == _DETAILS:
                    child_flags |= IN_DETAILS
                elif kind == _TEXTAREA:
                    closing = _CLOSE_TEXTAREA
                if record is not None:
                    add_element(record)
            in_head_text = (child_flags & IN_HEAD) != 0
            push((node.iter(True, in_head_text), closing, child_flags, record))
            break
        else:
            # The element's children are all walked: it closes.
            _, closing, _, done = stack.pop()
            if closing:
                if closing != _CLOSE_PHANTOM and not after_space:
                    add_text(" ")
                    after_space = True
                if closing == _CLOSE_PRE:
                    pre_depth -= 1
            if done is not None:
                done.end = len(texts)
                done.last = len(elements) - 1
                if done.tag in GIST_EXCLUDED_ELEMENTS:
                    after_space = False
    return doc


def _warn_tag(tag: str, warning: int, flags: int, warn_seen: set[str], warnings: list[str]) -> None:
    """The warning a tag outside the plain vocabulary gets (each one once per file)."""
    if warning == _WARN_SCOPED:
        if flags & IN_FIGURE:
            return
        key, message = (
            f"scoped:{tag}",
            f"<{tag}> outside a <figure>: use a semantic element instead",
        )
    else:
        key, message = f"unknown:{tag}", f"<{tag}> is outside the closed vocabulary"
    if key not in warn_seen:
        warn_seen.add(key)
        warnings.append(message)


def _check_attributes(tag: str, attrs: dict[str, str | None], out: list[str]) -> None:
    """The presentation rule on an element's attributes (a name beyond the harmless ones)."""
    for name in attrs:
        lowered = name.lower()
        if lowered in FORBIDDEN_ATTRIBUTES:
            out.append(f"{lowered} attribute on <{tag}>: presentation is not memory")
        elif lowered.startswith(EVENT_HANDLER_PREFIX) and len(lowered) > _ON_LEN:
            out.append(f"{lowered} handler on <{tag}>: a memory file does not execute")


def _attr(attrs: dict[str, str | None], name: str) -> str | None:
    """An attribute's value ("" for a bare attribute), or None when absent."""
    if name not in attrs:
        return None
    value = attrs[name]
    return "" if value is None else value


def attr(element: Element, name: str) -> str | None:
    """An element's attribute value ("" for a bare attribute), or None when absent."""
    return _attr(element.attrs, name)


def direct_text(node: Any) -> str:
    """Direct text children joined and trimmed, cut to 40 (for messages, as memhtml does)."""
    parts: list[str] = []
    child = node.first_child
    while child is not None:
        if child.tag == "-text":
            parts.append(child.text_content or "")
        child = child.next
    return tx.utf16_prefix(tx.js_trim("".join(parts)), 40)


def document_of(text: str) -> Document:
    """Parse a whole file (a leading BOM is not given to the parser) and collect it."""
    source = text[1:] if text.startswith("\ufeff") else text
    root = LexborHTMLParser(source).root
    return collect(root) if root is not None else Document()
