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

import functools
import logging
import math
import re
import sys
import threading
from dataclasses import dataclass
from itertools import chain
from typing import Any, cast

from headd.errors import InvalidMemory
from headd.memfile import text as tx
from headd.memfile.constraints import violations_of, warnings_of
from headd.memfile.document import Document, Element, attr, document_of
from headd.memfile.hashes import blob_sha_of, digest_of, frame_key_of
from headd.memfile.text import is_valid_datetime
from headd.memfile.vocabulary import (
    rel_of_token,
)
from headd.paths import normalize_path, origin_path_of, record_para, workspace_of
from headd.record import (
    Citation,
    EntityRow,
    Facet,
    Link,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    Para,
    TaskStatus,
    deflate_text,
)

__all__ = [
    "CheckResult",
    "check_memory",
    "is_valid_datetime",  # re-exported: the writer validates timestamps with the same rule
    "js_number",
    "parse_memory",
]

log = logging.getLogger(__name__)

_JS_DECIMAL = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)", re.ASCII
)
_JS_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)
_MAX_SAFE_INTEGER = 2**53 - 1


def js_number(raw: str) -> float:
    """JavaScript's ``Number(string)``: trimmed, blank -> 0, hex/octal/binary, ``Infinity``, NaN."""
    text = tx.js_trim(raw)
    if text.replace(".", "", 1).isdigit() and text.isascii():
        return float(text)  # the common case: ASCII digits, at most one point (not alone)
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


# --- extraction -----------------------------------------------------------------------------


# The same few meta values (a confidence of ``0.90``, say) recur across a store, and this is a
# pure function of them: remembered, bounded.
@functools.lru_cache(maxsize=1024)
def _bounded(raw: str | None, low: float, high: float, integral: bool) -> float | None:
    """The meta value as a number within ``[low, high]`` (integral if asked), else None."""
    if raw is None:
        return None
    if tx.js_trim(raw) == "":
        return None  # a blank value stated no number (JavaScript would read it as 0)
    value = js_number(raw)
    if not math.isfinite(value) or value < low or value > high:
        return None
    if integral and not value.is_integer():
        return None
    return value


def _first_finite_data(dd: Element, elements: list[Element]) -> float | None:
    """The first ``<data value>`` under a ``<dd>`` that ``Number()`` reads as finite."""
    for element in elements[dd.index + 1 : dd.last + 1]:
        if element.tag != "data":
            continue
        raw = attr(element, "value")
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


class _RecentParses:
    """The records of the last few texts parsed, by path and by the text object itself.

    A put is parsed where it is judged (its content hash finds duplicates) and again where the
    overlay folds it into the session's view: the same ``str`` object at the same path, a
    fraction of a millisecond each time. A hit needs that very object (``is``), never an equal
    one, so a lookup hashes nothing; records are frozen, so sharing one is safe. Refusals are
    not kept: they raise again. Bytes (files read from git) are not kept either: each is read
    once per version.
    """

    SIZE = 64

    def __init__(self) -> None:
        self._records: dict[tuple[str, int], tuple[str, MemoryRecord]] = {}
        self._lock = threading.Lock()

    def get(self, path: str, text: str) -> MemoryRecord | None:
        hit = self._records.get((path, id(text)))
        if hit is None or hit[0] is not text:
            return None
        return hit[1]

    def put(self, path: str, text: str, record: MemoryRecord) -> None:
        with self._lock:
            records = self._records
            records[(path, id(text))] = (text, record)
            while len(records) > self.SIZE:
                del records[next(iter(records))]


_recent = _RecentParses()


def parse_memory(path: str, html: str | bytes) -> MemoryRecord:
    """Parse one memory file at ``path`` (repo-relative) into a record, or raise InvalidMemory.

    Every violation is collected into the one error; warnings ride on the record.
    """
    if isinstance(html, str):
        known = _recent.get(path, html)
        if known is not None:
            return known
    text, raw = _decode(path, html)
    try:
        record = _parse(path, text, raw)
    except InvalidMemory:
        raise
    except Exception as exc:  # the parser is total: any other failure is a refusal, logged
        log.exception("parser failure on %s", path)
        raise InvalidMemory(path, [f"unparseable memory file ({type(exc).__name__})"]) from exc
    if isinstance(html, str):
        _recent.put(path, html, record)
    return record


def _parse(path: str, text: str, raw: bytes) -> MemoryRecord:
    doc = document_of(text)
    violations, first_meta = violations_of(doc)
    if violations:
        raise InvalidMemory(path, violations)
    if len(doc.articles) != 1:  # unreachable once the checks pass; keeps the types honest
        raise InvalidMemory(path, ["no <article>: a memory file needs exactly one"])
    return _build(path, raw, doc, doc.articles[0], first_meta)


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
            warnings = tuple(warnings_of(document_of(text)))
        except Exception:  # undecodable input has no document to warn about
            warnings = ()
        return CheckResult(record=None, violations=exc.violations, warnings=warnings)
    return CheckResult(record=record, violations=(), warnings=record.warnings)


def _build(
    path: str,
    raw: bytes,
    doc: Document,
    article: Element,
    metas: dict[str, str],
) -> MemoryRecord:
    norm_path = normalize_path(path)
    text_of = doc.text_of

    title = text_of(doc.titles[0]) if doc.titles else ""
    canonical, body_text = doc.canonical_and_text_of(article)  # the hash and the body text
    gist = doc.claim_text(doc.marks[0])

    # Facets: every <dd> under the latest <dt> of each <dl>, in document order.
    raw_facets: list[tuple[str, str, float | None]] = []
    elements = doc.elements
    for dl in doc.dls:
        name: str | None = None
        for child in elements[dl.index + 1 : dl.last + 1]:
            if child.parent is not dl:
                continue
            if child.tag == "dt":
                name = text_of(child)
            elif child.tag == "dd" and name is not None:
                raw_facets.append((name, text_of(child), _first_finite_data(child, elements)))

    raw_citations: list[tuple[str, str | None]] = []
    for element in doc.quotes:
        cite_text = text_of(element)
        if cite_text:
            raw_citations.append((cite_text, attr(element, "cite") if element.tag == "q" else None))
    summaries = [summary for summary in map(text_of, doc.summaries) if summary]
    terms = [term for term in map(text_of, doc.dfns) if term]

    # The repeatable metas: trimmed, non-empty, unique values in document order.
    repeated: dict[str, dict[str, None]] = {
        "memhtml-entity": {},
        "memhtml-tag": {},
        "memhtml-alias": {},
    }
    for meta_name, content in doc.metas:
        values = repeated.get(meta_name)
        if values is not None:
            trimmed = tx.js_trim(content)
            if trimmed:
                values[trimmed] = None  # a dict keeps the first occurrence's place
    entities = tuple(repeated["memhtml-entity"])
    tags = tuple(repeated["memhtml-tag"])
    aliases = tuple(repeated["memhtml-alias"])

    links: list[Link] = []
    seen_edges: set[tuple[str, str]] = set()
    for token, href in doc.links:
        if token is None or href is None:
            continue
        rel = rel_of_token(token)
        if rel is None:
            continue
        dst = normalize_path(href)
        if dst == "" or dst == norm_path or (rel, dst) in seen_edges:
            continue
        seen_edges.add((rel, dst))
        links.append(Link(rel=rel, href=href))

    facets = tuple(
        [
            Facet(name=n, value=v, numeric_value=num)
            for n, v, num in _unique_by(raw_facets, _facet_key)
        ]
    )
    citations = tuple(
        [Citation(text=t, href=h) for t, h in _unique_by(raw_citations, _citation_key)]
    )

    content_hash = digest_of(canonical)
    word_count = tx.word_count_of(body_text, collapsed=True)
    # The closed vocabularies' values as their one interned object each (what a snapshot
    # decode gives every record too, see ``headd.record``): not a copy per record.
    para = cast(Para, sys.intern(record_para(norm_path)))
    archived = para == "archive"
    memory_type = cast(MemoryType, sys.intern(metas["memhtml-type"]))
    confidence = _bounded(metas.get("memhtml-confidence"), 0, 1, False)
    importance = _bounded(metas.get("memhtml-importance"), 1, 10, True)
    reprieves = _bounded(metas.get("memhtml-reprieves"), 0, _MAX_SAFE_INTEGER, True)
    needs_revision = metas.get("memhtml-needs-revision")
    raw_task_status = metas.get("memhtml-task-status")
    task_status = None if raw_task_status is None else cast(TaskStatus, sys.intern(raw_task_status))

    blob_sha = blob_sha_of(raw)
    disclosure_text = tx.disclosure_text_of(
        gist, summaries, [(n, v) for n, v, _ in raw_facets], [t for t, _ in raw_citations]
    )
    entity_rows = _entity_rows(entities, terms, doc.langs)
    origin_path = origin_path_of(norm_path) if archived else None
    workspace = workspace_of(norm_path)
    frame_key = frame_key_of(gist, collapsed=True)
    return MemoryRecord(
        path=norm_path,
        blob_sha=blob_sha,
        content_hash=content_hash,
        meta_content_hash=metas.get("memhtml-content-hash"),
        memory_type=memory_type,
        status=cast(MemoryStatus, sys.intern(metas["memhtml-status"])),
        title=title,
        claim=gist,
        body_deflated=deflate_text(body_text),
        disclosure=None if disclosure_text == gist else disclosure_text,
        word_count=word_count,
        tags=tags,
        entities=entities,
        entity_rows=entity_rows,
        aliases=aliases,
        links=tuple(links),
        facets=facets,
        citations=citations,
        event_at=doc.event_at,
        created_at=metas.get("memhtml-created"),
        updated_at=metas.get("memhtml-updated"),
        archived_at=metas.get("memhtml-archived"),
        valid_from=metas.get("memhtml-valid-from"),
        valid_until=metas.get("memhtml-valid-until"),
        superseded_by=metas.get("memhtml-superseded-by"),
        archived=archived,
        origin_path=origin_path,
        para=para,
        workspace=workspace,
        frame_key=frame_key,
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
        warnings=tuple(doc.warnings),
    )


def _entity_rows(
    entities: tuple[str, ...], terms: list[str], langs: list[str]
) -> tuple[EntityRow, ...]:
    """``tx.entity_rows_of(raw entity metas, terms, langs)`` as records, from the entity metas
    already trimmed and deduplicated (equal values give equal rows, so nothing else changes)."""
    if not terms and not langs and len(entities) == 1:  # the common case: one entity meta
        entity_type, name = tx.split_entity(entities[0])
        return (EntityRow(entity_type=entity_type, entity_name=name),)  # trimmed: never blank
    rows: list[EntityRow] = []
    seen: set[str] = set()
    for entity_type, name in chain(
        map(tx.split_entity, entities),
        (("concept", tx.js_trim(term)) for term in terms),
        (("lang", lang) for lang in langs),
    ):
        key = entity_type + "\0" + name
        if name and key not in seen:  # only a blank term has no name (langs are never blank)
            seen.add(key)
            rows.append(EntityRow(entity_type=entity_type, entity_name=name))
    return tuple(rows)


def _facet_key(facet: tuple[str, str, float | None]) -> str:
    return facet[0] + "\0" + facet[1]


def _citation_key(citation: tuple[str, str | None]) -> str:
    return citation[0]


def _unique_by(items: list[Any], key: Any) -> list[Any]:
    if len(items) < 2:  # the common case: nothing to deduplicate
        return items
    seen: set[str] = set()
    out: list[Any] = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
