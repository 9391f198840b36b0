"""What every importer produces: ``Item`` (one memory to write) and ``Skipped`` (a file or an
entry left out, with the reason), and the provenance each memory carries.

Provenance is written where memhtml 0.15.1 reads it: the article's last paragraph names the
source, the file and the file's hash (body text, so memhtml shows and searches it), and one
entity ``import:<source>-<key hash>`` (a head meta, outside the content hash) is the key a
re-import finds the memory by when the source file was edited since.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

#: A source file larger than this is skipped: a memory is one fact, not a document.
MAX_FILE_BYTES = 256 * 1024
#: A memory's text (claim and body) longer than this is skipped.
MAX_ITEM_CHARS = 64 * 1024
#: How many characters of a title are kept.
MAX_TITLE_CHARS = 120

PROVENANCE_PREFIX = "Imported from "
KEY_ENTITY_TYPE = "import"


@dataclass(frozen=True)
class Item:
    """One memory to write. ``key`` identifies it in its source across edits (a file path, a
    section, an entry id); ``links`` name other items by key, with the memhtml rel."""

    source: str
    file: str
    file_hash: str
    key: str
    title: str
    type: str
    claim: str
    body: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    workspace: str | None = None
    links: tuple[tuple[str, str], ...] = ()
    archived: bool = False
    entities: tuple[str, ...] = ()

    @property
    def key_entity(self) -> str:
        return key_entity(self.source, self.key)

    @property
    def provenance(self) -> str:
        return f"{PROVENANCE_PREFIX}{self.source}: {self.file} ({self.file_hash})."


@dataclass(frozen=True)
class Skipped:
    """Something left out: ``what`` names it (a file, a section, an entry), ``reason`` why."""

    what: str
    reason: str


@dataclass
class Parsed:
    """An importer's answer: the items in source order and everything it left out."""

    items: list[Item] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: Links that name nothing the import holds, as ``(item key, target)``.
    broken_links: list[tuple[str, str]] = field(default_factory=list)


def file_hash(data: bytes) -> str:
    """The short form of a file's sha256 a memory names its source by."""
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def key_entity(source: str, key: str) -> str:
    digest = hashlib.sha256(f"{source}\0{key}".encode()).hexdigest()[:16]
    return f"{KEY_ENTITY_TYPE}:{source}-{digest}"


def short_title(text: str) -> str:
    """A title from free text: its first line, whitespace folded, cut at a word boundary."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= MAX_TITLE_CHARS:
        return line
    cut = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut or line[:MAX_TITLE_CHARS]).rstrip(" ,;:") + "…"
