"""The memory record: one parsed memory file as an immutable value.

Every layer shares this one shape: the parser (``headd.memfile``) makes it, the head
(``headd.head``) indexes it by path and shares it by identity between versions, the daemon puts
it on the wire, and the SQLite plane projects it into ``index.db``. It is a frozen msgspec Struct
because that is immutable, cheap to build (the parser makes thousands a second), compared by
value (a version built by advancing must equal one loaded from scratch) and encodes to JSON
without a copy.

Field names follow the wire (docs/protocol.md, "Methods") where it names them,
and the ``files`` columns of memhtml's ``index.db`` for the derived ones (``fts_text``,
``disclosure_text``, ``word_count``, ``para``, ``origin_path``).
"""

from __future__ import annotations

import zlib

import msgspec

from headd.memfile import vocabulary
from headd.memfile.text import fts_text_of, words_and_chunks_of
from headd.memfile.vocabulary import MemoryStatus, MemoryType, Para, TaskStatus

# The closed vocabularies a record's fields take live with the rest of the format's vocabulary
# (``headd.memfile.vocabulary``); they are re-exported here because every layer names them through
# the record.
MEMORY_TYPES = vocabulary.MEMORY_TYPES
MEMORY_STATUSES = vocabulary.MEMORY_STATUSES
TASK_STATUSES = vocabulary.TASK_STATUSES
PARA_BUCKETS = vocabulary.PARA_BUCKETS


def deflate_text(text: str) -> bytes:
    """``text`` as UTF-8, raw-deflated (zlib level 1, no header or checksum: the record's bytes
    are checked where they are stored; the cost and the saving are in docs/design.md, "One
    record type")."""
    packer = zlib.compressobj(1, zlib.DEFLATED, -15)
    return packer.compress(text.encode("utf-8")) + packer.flush()


def inflate_text(data: bytes) -> str:
    """The text :func:`deflate_text` made."""
    return zlib.decompress(data, -15).decode("utf-8")


class Link(msgspec.Struct, frozen=True, array_like=False):
    """A head ``<link rel="memhtml-…">``: ``rel`` bare with underscores, ``href`` as written."""

    rel: str
    href: str


class Facet(msgspec.Struct, frozen=True):
    """One ``<dt>``/``<dd>`` pair; ``numeric_value`` from the first finite ``<data value>``."""

    name: str
    value: str
    numeric_value: float | None = None


class Citation(msgspec.Struct, frozen=True):
    """A ``<cite>`` (href None) or a ``<q cite>``."""

    text: str
    href: str | None = None


class EntityRow(msgspec.Struct, frozen=True, array_like=True):
    """A ``file_entities`` row: head entities split at the first colon, then concept/lang."""

    entity_type: str
    entity_name: str


class Chunk(msgspec.Struct, frozen=True):
    """A chunk of the body text; ``char_count`` in UTF-16 code units, as JavaScript counts."""

    ordinal: int
    text: str
    char_count: int


class MemoryRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One memory file, parsed and checked.

    The file's text is not kept: ``blob_sha`` names it. A record parsed from git reads it back
    from the object database by that id when an overlay splices its head, a move re-parses it or
    a commit writes it (microseconds, and only on those paths); a record an overlay parsed from a
    session's op keeps its text beside the overlay's view until the commit lands
    (``headd.head.texts``). Every file's text on its record would be a version's largest share
    of bytes (docs/design.md, "One record type").
    """

    path: str
    blob_sha: str
    content_hash: str
    meta_content_hash: str | None = None
    memory_type: MemoryType
    status: MemoryStatus
    title: str
    claim: str
    #: The body text, deflated (:func:`deflate_text`); read through ``body_text``. Only the
    #: tokenizer, the vector text, the SQLite projection and a record on the wire read it, once
    #: each, and never a search per hit: deflated it is under half the bytes of the ``str``.
    body_deflated: bytes
    #: What recall may quote, when it is more than the claim (None: the claim alone, the common
    #: case, read through ``disclosure_text`` without a second copy of the claim).
    disclosure: str | None = None
    word_count: int
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    entity_rows: tuple[EntityRow, ...] = ()
    aliases: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    facets: tuple[Facet, ...] = ()
    citations: tuple[Citation, ...] = ()
    event_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    archived_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    superseded_by: str | None = None
    archived: bool = False
    origin_path: str | None = None
    para: Para | None = None
    workspace: str | None = None
    frame_key: str | None = None
    importance: int = 5
    confidence: float = 1.0
    reprieves: int = 0
    needs_revision: bool = False
    author: str = "agent"
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    task_status: TaskStatus | None = None
    due: str | None = None
    warnings: tuple[str, ...] = ()

    # ``fts_text`` and ``chunks`` are functions of the title, the claim and the body text, read
    # once per record by the SQLite projection and never by a search: computed when read rather
    # than stored, they cost no memory (they were a quarter of a record's bytes) and no snapshot
    # bytes.

    @property
    def body_text(self) -> str:
        """The article's text, collapsed (``files.body_text``)."""
        return inflate_text(self.body_deflated)

    @property
    def disclosure_text(self) -> str:
        """What recall may quote (``files.disclosure_text``): gist, summaries, facets, citations."""
        return self.claim if self.disclosure is None else self.disclosure

    @property
    def fts_text(self) -> str:
        """Title, claim and body joined by newlines, empty parts dropped (``files.fts_text``)."""
        return fts_text_of(self.title, self.claim, self.body_text)

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The body text's chunks (``chunks`` rows), as the parser's chunking makes them."""
        _words, pieces = words_and_chunks_of(self.body_text)  # the body text is collapsed
        return tuple(
            [Chunk(ordinal=i, text=text, char_count=n) for i, (text, n) in enumerate(pieces)]
        )
