"""One parsed memory file projected onto its ``index.db`` rows (memhtml's ``projectFile``).

Pure: a :class:`headd.record.MemoryRecord` in, a :class:`FileProjection` out (the file's chunks
and the list of writes), no I/O and no clock (``indexed_at`` is passed in). ``rebuild`` and
``update`` both apply these writes, so the two paths cannot disagree on a row.

The writes are idempotent: they clear the file's tags, entities, facets, citations and own
authored edges, and only those of its chunks whose content hash is not the new one (a head-only
edit keeps the chunk rows and so the vectors), then upsert the ``files`` row on ``path`` (never
delete it: that would cascade the chunks and their vectors away). Inbound edges are left alone:
each is another file's assertion.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from headd.memfile import vocabulary
from headd.paths import normalize_path, origin_path_of, record_para, workspace_of
from headd.record import MemoryRecord

from .chunking import PlaneChunk, chunk_id_for
from .db import SqlValue, Write

# One vocabulary for the whole product (headd/memfile/vocabulary.py); sets here for membership.
MEMORY_RELS = frozenset(vocabulary.MEMORY_RELS)
PERSON_RELS = frozenset(vocabulary.PERSON_RELS)
TASK_RELS = frozenset(vocabulary.TASK_RELS)

#: The ``files`` columns in bind order: one list drives the insert and the upsert clause.
#: ``fts_text`` is not among them: it is a generated column (migration ``0100_lean_text.sql``).
FILE_COLUMNS: tuple[str, ...] = (
    "path",
    "blob_sha",
    "content_hash",
    "memory_type",
    "title",
    "body_text",
    "gist",
    "disclosure_text",
    "para",
    "workspace",
    "confidence",
    "importance",
    "archived",
    "origin_path",
    "word_count",
    "created_at",
    "updated_at",
    "event_at",
    "archived_at",
    "valid_from",
    "valid_until",
    "reprieves",
    "needs_revision",
    "author",
    "session_id",
    "prompt_id",
    "turn_uuid",
    "indexed_at",
    "task_status",
    "due_at",
    "frame_key",
)

UPSERT_FILE_SQL = (
    f"INSERT INTO files ({', '.join(FILE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in FILE_COLUMNS)}) "
    "ON CONFLICT(path) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in FILE_COLUMNS if c != "path")
)
#: The ``chunk_spans`` columns in bind order (the ``chunks`` view reads the text from the body).
CHUNK_COLUMNS: tuple[str, ...] = (
    "chunk_id",
    "path",
    "content_hash",
    "ordinal",
    "start",
    "span_length",
    "own_text",
    "char_count",
)
UPSERT_CHUNK_SQL = (
    f"INSERT INTO chunk_spans ({', '.join(CHUNK_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in CHUNK_COLUMNS)}) "
    "ON CONFLICT(chunk_id) DO UPDATE SET "
    + ", ".join(
        f"{c} = excluded.{c}" for c in CHUNK_COLUMNS if c not in ("chunk_id", "content_hash")
    )
)
INSERT_EDGE_SQL = (
    "INSERT INTO edges (src_path, rel, dst_path, edge_class, derived, strength, provenance, "
    "src_hash, created_at) VALUES (?, ?, ?, ?, 0, 1.0, 'authored', ?, ?)"
)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class FileProjection:
    """Everything one file contributes to the index."""

    path: str
    content_hash: str
    chunks: tuple[PlaneChunk, ...]
    writes: tuple[Write, ...]


def rel_class_for(rel: str) -> str:
    if rel in MEMORY_RELS:
        return "memory"
    if rel in PERSON_RELS:
        return "person"
    if rel in TASK_RELS:
        return "task"
    return "provenance"


def word_count_of(body_text: str) -> int:
    return len(body_text.split())


def dedupe_by(values: Iterable[V], key: Callable[[V], K]) -> list[V]:
    """First occurrence per key, order kept: a repeated row would fail the batch's primary key."""
    seen: set[K] = set()
    out: list[V] = []
    for value in values:
        k = key(value)
        if k in seen:
            continue
        seen.add(k)
        out.append(value)
    return out


def chunks_of(record: MemoryRecord) -> tuple[PlaneChunk, ...]:
    """The parser's chunks with their content-addressed ids (an empty body has none)."""
    return tuple(
        PlaneChunk(chunk_id_for(record.content_hash, c.ordinal), c.ordinal, c.text, c.char_count)
        for c in record.chunks
    )


def file_row(
    record: MemoryRecord, path: str, blob_sha: str, indexed_at: str
) -> tuple[SqlValue, ...]:
    para = record_para(path)
    archived = para == "archive"
    row: tuple[SqlValue, ...] = (
        path,
        blob_sha,
        record.content_hash,
        record.memory_type,
        record.title,
        record.body_text,
        record.claim,
        record.disclosure_text,
        para,
        workspace_of(path),
        record.confidence,
        record.importance,
        1 if archived else 0,
        origin_path_of(path) if archived else None,
        record.word_count,
        record.created_at,
        record.updated_at,
        record.event_at,
        record.archived_at,
        record.valid_from,
        record.valid_until,
        record.reprieves,
        1 if record.needs_revision else 0,
        record.author,
        record.session_id,
        record.prompt_id,
        record.turn_uuid,
        indexed_at,
        record.task_status,
        record.due,
        record.frame_key,
    )
    assert len(row) == len(FILE_COLUMNS)
    return row


INSERT_TAG_SQL = "INSERT INTO file_tags (path, tag) VALUES (?, ?)"
INSERT_ENTITY_SQL = "INSERT INTO file_entities (path, entity_type, entity_name) VALUES (?, ?, ?)"
INSERT_FACET_SQL = "INSERT INTO file_facets (path, name, value, numeric_value) VALUES (?, ?, ?, ?)"
INSERT_CITATION_SQL = "INSERT INTO file_citations (path, text, href) VALUES (?, ?, ?)"
#: The insert statements of one file, in the order its writes apply them (``files`` first).
ROW_STATEMENTS: tuple[str, ...] = (
    UPSERT_FILE_SQL,
    INSERT_TAG_SQL,
    INSERT_ENTITY_SQL,
    UPSERT_CHUNK_SQL,
    INSERT_FACET_SQL,
    INSERT_CITATION_SQL,
    INSERT_EDGE_SQL,
)

Row = tuple[SqlValue, ...]


def edge_rows(record: MemoryRecord, path: str, indexed_at: str) -> list[Row]:
    """Authored edges from the head links: slash stripped, self-links and repeats dropped."""
    seen: set[tuple[str, str]] = set()
    out: list[Row] = []
    for link in record.links:
        dst = normalize_path(link.href)
        if dst == "" or dst == path:
            continue
        key = (link.rel, dst)
        if key in seen:
            continue
        seen.add(key)
        out.append((path, link.rel, dst, rel_class_for(link.rel), record.content_hash, indexed_at))
    return out


def chunk_span_rows(
    body_text: str, path: str, content_hash: str, chunks: tuple[PlaneChunk, ...]
) -> list[Row]:
    """Each chunk as where it lies in the body (``start``, ``span_length``, code points, the
    units of SQLite's ``substr``), or with its own text when it is no slice of the body.

    Chunks follow one another through the body, so each is looked for from where the last one
    ended; any place holding the same text would serve the ``chunks`` view as well.
    """
    rows: list[Row] = []
    at = 0
    for c in chunks:
        text = c.text
        found = body_text.find(text, at) if text else -1
        if found < 0 and text:
            found = body_text.find(text)
        if found < 0:
            rows.append((c.chunk_id, path, content_hash, c.ordinal, None, None, text, c.char_count))
            continue
        at = found + len(text)
        rows.append(
            (c.chunk_id, path, content_hash, c.ordinal, found, len(text), None, c.char_count)
        )
    return rows


def file_rows(
    record: MemoryRecord,
    path: str,
    blob_sha: str,
    indexed_at: str,
    chunks: tuple[PlaneChunk, ...],
) -> tuple[list[Row], ...]:
    """The rows one file inserts, one list per statement of :data:`ROW_STATEMENTS`.

    The one place a record becomes rows: ``project_file`` wraps them in writes for an update,
    and a rebuild's bulk load takes them as they are (no statement objects, no deletes), so the
    two cannot disagree on a row. ``path`` is already normalized.
    """
    content_hash = record.content_hash
    tags: list[Row] = []
    seen_tags: set[str] = set()
    for raw in record.tags:
        tag = raw.strip()
        if tag != "" and tag not in seen_tags:
            seen_tags.add(tag)
            tags.append((path, tag))
    entities: list[Row] = [
        (path, e.entity_type, e.entity_name)
        for e in dedupe_by(record.entity_rows, lambda e: (e.entity_type, e.entity_name))
    ]
    chunk_rows = chunk_span_rows(record.body_text, path, content_hash, chunks)
    facets: list[Row] = [
        (path, f.name, f.value, f.numeric_value)
        for f in dedupe_by(record.facets, lambda f: (f.name, f.value))
    ]
    citations: list[Row] = [
        (path, c.text, c.href) for c in dedupe_by(record.citations, lambda c: c.text)
    ]
    return (
        [file_row(record, path, blob_sha, indexed_at)],
        tags,
        entities,
        chunk_rows,
        facets,
        citations,
        edge_rows(record, path, indexed_at),
    )


def project_file(
    record: MemoryRecord, indexed_at: str, blob_sha: str | None = None, path: str | None = None
) -> FileProjection:
    """Project one record onto its complete row set (``archived`` follows the path)."""
    where = normalize_path(path if path is not None else record.path)
    sha = blob_sha if blob_sha is not None else record.blob_sha
    chunks = chunks_of(record)
    writes: list[Write] = [
        Write("DELETE FROM file_tags WHERE path = ?", (where,)),
        Write("DELETE FROM file_entities WHERE path = ?", (where,)),
        Write("DELETE FROM file_facets WHERE path = ?", (where,)),
        Write("DELETE FROM file_citations WHERE path = ?", (where,)),
        Write(
            "DELETE FROM chunk_spans WHERE path = ? AND content_hash <> ?",
            (where, record.content_hash),
        ),
        Write("DELETE FROM edges WHERE src_path = ? AND derived = 0", (where,)),
    ]
    for sql, rows in zip(
        ROW_STATEMENTS, file_rows(record, where, sha, indexed_at, chunks), strict=True
    ):
        writes += [Write(sql, row) for row in rows]
    return FileProjection(where, record.content_hash, chunks, tuple(writes))
