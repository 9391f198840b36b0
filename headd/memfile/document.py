"""The parsed document as one flat, ordered list of elements plus its text segments.

Lexbor (selectolax) builds the HTML5 tree in C; one Python pass over it records every element
(tag, attributes, where it sits: head, article, figure) and every text node as a segment, with
block edges as collapsible spaces. Each element knows the slice of segments its subtree covers
and the range of elements under it, so the checks and the extraction never walk the tree again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from headd.memfile import text as tx
from headd.memfile.vocabulary import GIST_EXCLUDED_ELEMENTS, INLINE_ELEMENTS

#: Lexbor reconstructs active formatting elements (a <code> closed early by a block end tag,
#: say) inside a <textarea>, which the HTML standard and parse5 do not: a textarea's content is
#: text only. Elements found inside one are walked as "phantoms": their text counts, they don't.
_PHANTOM = "#phantom"
_TEXT_ONLY = frozenset(("textarea", _PHANTOM))

# Element flags, set while walking: where an element sits.
IN_HEAD = 1
IN_ARTICLE = 2
IN_FIGURE = 4


@dataclass(slots=True)
class Element:
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

    def contains(self, other: Element) -> bool:
        """True when ``other`` is this element or one of its descendants."""
        return self.index <= other.index <= self.last


@dataclass(slots=True)
class Document:
    """The document as one ordered element list, its text segments, and direct handles."""

    elements: list[Element] = field(default_factory=list)
    articles: list[Element] = field(default_factory=list)
    titles: list[Element] = field(default_factory=list)
    metas: list[tuple[str, str]] = field(default_factory=list)
    links: list[Element] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    verbatims: list[bool] = field(default_factory=list)

    def text_of(self, element: Element) -> str:
        """memhtml's ``textContent``: collapsed, trimmed (``<pre>`` collapses here too)."""
        return tx.collapse_ascii("".join(self.texts[element.start : element.end]))

    def claim_text(self, mark: Element) -> str:
        """The gist: the mark's text without ``<pre>``/``<code>`` subtrees, collapsed, trimmed.

        Read from the segments, skipping the slices of the excluded elements, so it sees the
        tree memhtml sees (a phantom element inside a textarea is not a ``<code>`` here).
        """
        parts: list[str] = []
        at = mark.start
        for inner in self.elements[mark.index + 1 : mark.last + 1]:
            if inner.tag in GIST_EXCLUDED_ELEMENTS and inner.start >= at:
                parts.extend(self.texts[at : inner.start])
                at = inner.end
        parts.extend(self.texts[at : mark.end])
        return tx.collapse_ascii("".join(parts))

    def canonical_of(self, element: Element) -> str:
        """The canonical (hash) text of an element's subtree."""
        if element.in_pre:  # memhtml starts a subtree walk outside any <pre>: walk afresh
            return tx.canonical_text(element.node)
        return tx.render_segments(
            self.verbatims[element.start : element.end], self.texts[element.start : element.end]
        )


def collect(root: Any) -> Document:
    """Walk the document once, in document order: elements and text segments.

    Lexbor's own ``traverse`` drives the walk (in C, no recursion); the structure comes from
    each node's parent id, closing every open element the walk has left. That is what lets a
    whole file cost one pass.
    """
    doc = Document()
    elements = doc.elements
    texts = doc.texts
    verbatims = doc.verbatims
    no_edges = INLINE_ELEMENTS | {_PHANTOM}
    head_seen = False
    open_ids: list[int] = []  # mem_id of each open element, innermost last
    open_elements: list[Element] = []
    pre_depth = 0

    def close_to(parent_id: int) -> int:
        depth = pre_depth
        while open_ids and open_ids[-1] != parent_id:
            open_ids.pop()
            done = open_elements.pop()
            if done.tag not in no_edges:
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
            if not title_just_opened and open_elements and open_elements[-1].child_flags & IN_HEAD:
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
        if open_elements and open_elements[-1].tag in _TEXT_ONLY:
            host = open_elements[-1]
            phantom = Element(node, _PHANTOM, {}, host.child_flags, len(texts), host.index, -1)
            phantom.child_flags = host.child_flags
            open_ids.append(node.mem_id)
            open_elements.append(phantom)
            continue
        parent_index = open_elements[-1].index if open_elements else -1
        flags = open_elements[-1].child_flags if open_elements else 0
        attrs = node.attributes
        index = len(elements)
        element = Element(
            node, tag, attrs, flags, len(texts), index, parent_index, in_pre=pre_depth > 0
        )
        if tag not in no_edges:
            texts.append(" ")
            verbatims.append(False)
        elements.append(element)
        open_ids.append(node.mem_id)
        open_elements.append(element)
        child_flags = flags
        if tag == "head" and not head_seen:
            head_seen = True
            child_flags |= IN_HEAD
        elif tag == "article":
            doc.articles.append(element)
            child_flags |= IN_ARTICLE
        elif tag == "figure":
            child_flags |= IN_FIGURE
        elif tag == "pre":
            pre_depth += 1
        elif tag == "title":
            doc.titles.append(element)
            title_just_opened = True
        elif flags & IN_HEAD:
            if tag == "meta":
                if "name" in attrs:
                    doc.metas.append((attrs["name"] or "", attrs.get("content") or ""))
            elif tag == "link":
                doc.links.append(element)
        element.child_flags = child_flags
    close_to(-2)
    return doc


def attr(element: Element, name: str) -> str | None:
    """An attribute's value ("" for a bare attribute), or None when absent."""
    attrs = element.attrs
    if name not in attrs:
        return None
    value = attrs[name]
    return "" if value is None else value


def direct_text(node: Any) -> str:
    """Direct text children joined and trimmed, cut to 40 (for messages, as memhtml does)."""
    parts: list[str] = []
    child = node.child
    while child is not None:
        if child.tag == "-text":
            parts.append(child.text_content or "")
        child = child.next
    return tx.utf16_prefix(tx.js_trim("".join(parts)), 40)


def has_ancestor(doc: Document, element: Element, tag: str) -> bool:
    parent = element.parent
    while parent >= 0:
        ancestor = doc.elements[parent]
        if ancestor.tag == tag:
            return True
        parent = ancestor.parent
    return False


def document_of(text: str) -> Document:
    """Parse a whole file (a leading BOM is not given to the parser) and collect it."""
    source = text[1:] if text.startswith("\ufeff") else text
    root = LexborHTMLParser(source).root
    return collect(root) if root is not None else Document()
