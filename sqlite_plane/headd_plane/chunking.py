"""A chunk row of ``index.db``: the parser's chunk with its content-addressed id.

The parser (``headd.memfile.text.chunk_text``) cuts every record's body into chunks, counting
UTF-16 code units as memhtml does; the plane only names them. One chunking rule for the whole
product, so the head's vector text and the plane's chunk rows can never drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from headd.memfile.hashes import chunk_id_of as chunk_id_for
from headd.memfile.text import CHUNK_MAX_CHARS, utf16_len

__all__ = ["CHUNK_MAX_CHARS", "PlaneChunk", "chunk_id_for", "utf16_len"]


@dataclass(frozen=True, slots=True)
class PlaneChunk:
    chunk_id: str
    ordinal: int
    text: str
    char_count: int
