"""The six constraints and the head rules, over a collected document.

Violations come back in memhtml 0.15.1's order and with its texts (head, article, mark, times,
presentation, links, then the meta rules), every one of them, never just the first; warnings
(one per element name) never block. The rules that look at every element (times, presentation,
warnings) are applied by the document walk itself (``document.collect``), which leaves their
findings on the document in order; the rest run here over what the walk recorded.
"""

from __future__ import annotations

import functools

from headd.memfile.document import IN_ASIDE, IN_DETAILS, Document
from headd.memfile.text import is_valid_datetime, js_trim
from headd.memfile.vocabulary import (
    DATETIME_METAS,
    MEMORY_STATUSES,
    MEMORY_TYPES,
    META_NAMES,
    META_PREFIX,
    REPEATABLE_META,
    REQUIRED_META,
    TASK_STATUSES,
    rel_of_token,
)

__all__ = ["is_root_relative", "is_valid_datetime", "violations_of", "warnings_of"]


# Links to the same hub or index recur across a store's files, and the rule is a pure function of
# the text: remembered, bounded.
@functools.lru_cache(maxsize=4096)
def is_root_relative(href: str) -> bool:
    """``/``-rooted, not protocol-relative, and no empty, ``.`` or ``..`` path segment."""
    if not href.startswith("/") or href.startswith("//"):
        return False
    cut = len(href)
    for stop in "?#":  # the path ends at the first "?" or "#"
        at = href.find(stop)
        if at >= 0 and at < cut:
            cut = at
    path = href[:cut]
    return all(segment not in ("", ".", "..") for segment in path[1:].split("/"))


# --- the checks (constraint order, then document order, as memhtml reports them) -----------


def _check_head(doc: Document, first_meta: dict[str, str]) -> list[str]:
    """The title and meta-name rules; ``first_meta`` gets each name's first value."""
    out: list[str] = []
    if len(doc.titles) != 1:
        out.append(f"{len(doc.titles)} <title> elements: a memory file needs exactly one")
    elif js_trim(doc.titles[0].node.text(deep=False)) == "":  # its direct text, read in C
        out.append("empty <title>")
    repeats: dict[str, int] = {}  # names met more than once: how often
    for name, content in doc.metas:
        if name in first_meta:
            repeats[name] = repeats.get(name, 1) + 1
        else:
            first_meta[name] = content
    for required in REQUIRED_META:
        if required not in first_meta:
            out.append(f'missing required <meta name="{required}">')
    for name in first_meta:  # in first-occurrence order
        if name in META_NAMES:
            if name in repeats and name not in REPEATABLE_META:
                out.append(
                    f'<meta name="{name}"> appears {repeats[name]} times but is not repeatable'
                )
        elif name.startswith(META_PREFIX):
            out.append(f'<meta name="{name}"> is outside the closed metadata vocabulary')
    return out


def _check_article(doc: Document) -> list[str]:
    if not doc.articles:
        return ["no <article>: a memory file needs exactly one"]
    if len(doc.articles) > 1:
        return [f"{len(doc.articles)} <article> elements: a memory file needs exactly one"]
    return []


def _check_mark(doc: Document) -> list[str]:
    marks = doc.marks
    if not marks:
        return ["no <mark>: the claim span is required"]
    if len(marks) > 1:
        return [f"{len(marks)} <mark> elements: exactly one span is the claim"]
    mark = marks[0]
    out: list[str] = []
    if doc.claim_text(mark) == "":
        out.append("empty <mark>: the claim span must say something")
    folded: list[str] = []
    if mark.flags & IN_ASIDE:
        folded.append("<mark> inside <aside>: the claim is never a caveat")
    if mark.flags & IN_DETAILS:
        folded.append("<mark> inside <details>: the claim is never behind a fold")
    if folded:
        return out + folded
    first_block = doc.first_block
    if first_block is None:
        out.append("<mark> outside any <p> or <li>: the claim must lead a paragraph or list item")
    elif not first_block.contains(mark):
        out.append(f"<mark> not in the first <{first_block.tag}>: the claim must lead the article")
    return out


def _check_links(doc: Document) -> list[str]:
    out: list[str] = []
    for rel, href in doc.links:
        if rel is None or not rel.startswith(META_PREFIX):
            continue
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
    """One warning per unknown element name, scoped element outside a figure, bad data-lang."""
    return list(doc.warnings)


def violations_of(doc: Document) -> tuple[list[str], dict[str, str]]:
    """Every violation in memhtml's order (structure, then head metas), and the first metas."""
    first_meta: dict[str, str] = {}
    violations = _check_head(doc, first_meta) + _check_article(doc)
    if len(doc.articles) == 1:
        violations += _check_mark(doc)
    violations += doc.time_violations + doc.presentation_violations + _check_links(doc)
    violations += _check_metas(first_meta)
    return violations, first_meta
