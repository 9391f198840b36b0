"""Chunks of an article's text, and their content-addressed ids.

memhtml counts characters as JavaScript does (UTF-16 code units), so a chunk boundary and
``char_count`` here are computed in those units to give the same rows as memhtml's index.
An article that fits in :data:`CHUNK_MAX_CHARS` is one chunk (the common case: one fact per
file); a longer one packs whole sentences greedily and hard-cuts a sentence that is too long,
so no text is ever dropped. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

CHUNK_MAX_CHARS = 1_800

# JavaScript's String.prototype.trim and /\s/ whitespace set.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SENTENCE_BREAK = re.compile(f"(?<=[.!?])[{_JS_SPACE}]+")


@dataclass(frozen=True, slots=True)
class PlaneChunk:
    chunk_id: str
    ordinal: int
    text: str
    char_count: int


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (JavaScript's ``length``)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _utf16_slices(text: str, size: int) -> list[str]:
    """Cut ``text`` into pieces of ``size`` UTF-16 units, as ``slice`` would (no pair split
    is avoided by JavaScript either; a lone half is kept as Python cannot hold one, so the
    cut moves one unit later instead)."""
    out: list[str] = []
    current: list[str] = []
    units = 0
    for ch in text:
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > size and current:
            out.append("".join(current))
            current, units = [], 0
        current.append(ch)
        units += width
    if current:
        out.append("".join(current))
    return out


def chunk_id_for(content_hash: str, ordinal: int) -> str:
    """``sha256(content_hash + ":" + ordinal)``: an identical body anywhere gets the same id."""
    return hashlib.sha256(f"{content_hash}:{ordinal}".encode()).hexdigest()


def _split_sentences(text: str, max_chars: int) -> list[str]:
    units: list[str] = []
    for sentence in _SENTENCE_BREAK.split(text):
        piece = js_trim(sentence)
        if piece == "":
            continue
        if utf16_len(piece) <= max_chars:
            units.append(piece)
        else:
            units.extend(_utf16_slices(piece, max_chars))
    return units


def _pack(units: list[str], max_chars: int) -> list[str]:
    chunks: list[str] = []
    current = ""
    for unit in units:
        candidate = unit if current == "" else f"{current} {unit}"
        if utf16_len(candidate) <= max_chars:
            current = candidate
            continue
        if current != "":
            chunks.append(current)
        current = unit
    if current != "":
        chunks.append(current)
    return chunks


def chunk_texts(text: str, max_chars: int = CHUNK_MAX_CHARS) -> list[str]:
    """The chunk texts of an article, in order; empty for an empty article."""
    trimmed = js_trim(text)
    if trimmed == "":
        return []
    if utf16_len(trimmed) <= max_chars:
        return [trimmed]
    return _pack(_split_sentences(trimmed, max_chars), max_chars)


def chunk_text(text: str, content_hash: str, max_chars: int = CHUNK_MAX_CHARS) -> list[PlaneChunk]:
    return [
        PlaneChunk(chunk_id_for(content_hash, ordinal), ordinal, piece, utf16_len(piece))
        for ordinal, piece in enumerate(chunk_texts(text, max_chars))
    ]
