"""The six constraints and the head rules, over a collected document.

Violations come back in memhtml 0.15.1's order and with its texts (head, article, mark, times,
presentation, links, then the meta rules), every one of them, never just the first; warnings
(one per element name) never block.
"""

from __future__ import annotations

import calendar
import re

from headd.memfile.document import (
    IN_ARTICLE,
    IN_FIGURE,
    Document,
    Element,
    attr,
    direct_text,
    has_ancestor,
)
from headd.memfile.vocabulary import (
    DATETIME_METAS,
    EVENT_HANDLER_PREFIX,
    FIGURE_SCOPED_ELEMENTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_ELEMENTS,
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

_ISO_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)Z)?"
)
_LANG_TOKEN = re.compile(LANG_TOKEN_PATTERN)
_QUERY_OR_FRAGMENT = re.compile(r"[?#]")


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


def is_root_relative(href: str) -> bool:
    if not href.startswith("/") or href.startswith("//"):
        return False
    path = _QUERY_OR_FRAGMENT.split(href, maxsplit=1)[0]
    return all(segment not in ("", ".", "..") for segment in path[1:].split("/"))


# --- the checks (constraint order, then document order, as memhtml reports them) -----------


def _check_head(doc: Document) -> list[str]:
    out: list[str] = []
    if len(doc.titles) != 1:
        out.append(f"{len(doc.titles)} <title> elements: a memory file needs exactly one")
    elif direct_text(doc.titles[0].node) == "":
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


def _check_article(doc: Document) -> list[str]:
    if not doc.articles:
        return ["no <article>: a memory file needs exactly one"]
    if len(doc.articles) > 1:
        return [f"{len(doc.articles)} <article> elements: a memory file needs exactly one"]
    return []


def _check_mark(article: Element, doc: Document) -> list[str]:
    marks = [e for e in doc.elements if e.tag == "mark" and e.flags & IN_ARTICLE]
    if not marks:
        return ["no <mark>: the claim span is required"]
    if len(marks) > 1:
        return [f"{len(marks)} <mark> elements: exactly one span is the claim"]
    out: list[str] = []
    if doc.claim_text(marks[0]) == "":
        out.append("empty <mark>: the claim span must say something")
    folded: list[str] = []
    if has_ancestor(doc, marks[0], "aside"):
        folded.append("<mark> inside <aside>: the claim is never a caveat")
    if has_ancestor(doc, marks[0], "details"):
        folded.append("<mark> inside <details>: the claim is never behind a fold")
    if folded:
        return out + folded
    first_block = next(
        (e for e in doc.elements if e.tag in ("p", "li") and e.flags & IN_ARTICLE), None
    )
    if first_block is None:
        out.append("<mark> outside any <p> or <li>: the claim must lead a paragraph or list item")
    elif not first_block.contains(marks[0]):
        out.append(f"<mark> not in the first <{first_block.tag}>: the claim must lead the article")
    return out


def _check_times(doc: Document) -> list[str]:
    out: list[str] = []
    for element in doc.elements:
        if element.tag != "time":
            continue
        value = attr(element, "datetime")
        if value is None:
            out.append(f'<time> without datetime: "{direct_text(element.node)}"')
        elif not is_valid_datetime(value):
            out.append(f'<time datetime="{value}"> is not an ISO date or datetime')
    return out


def _check_presentation(doc: Document) -> list[str]:
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


def _check_links(doc: Document) -> list[str]:
    out: list[str] = []
    for element in doc.links:
        rel = attr(element, "rel")
        if rel is None or not rel.startswith(META_PREFIX):
            continue
        href = attr(element, "href")
        if rel_of_token(rel) is None:
            out.append(f'<link rel="{rel}"> is outside the closed edge vocabulary')
        if href is None or href == "":
            out.append(f'<link rel="{rel}"> without href')
        elif not is_root_relative(href):
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


def warnings_of(doc: Document) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []

    def push(key: str, message: str) -> None:
        if key not in seen:
            seen.add(key)
            out.append(message)

    for element in doc.elements:
        tag = element.tag
        lang = attr(element, "data-lang")
        if lang is not None and _LANG_TOKEN.fullmatch(lang) is None:
            push(f"lang:{lang}", f'data-lang="{lang}" is not a language token')
        if tag in FIGURE_SCOPED_ELEMENTS:
            if not element.flags & IN_FIGURE:
                push(f"scoped:{tag}", f"<{tag}> outside a <figure>: use a semantic element instead")
            continue
        if tag not in KNOWN_ELEMENTS:
            push(f"unknown:{tag}", f"<{tag}> is outside the closed vocabulary")
    return out


def violations_of(doc: Document) -> tuple[list[str], dict[str, str]]:
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
