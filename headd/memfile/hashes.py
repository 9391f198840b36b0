"""The two hashes of a memory file, the chunk id, and the frame key.

The content hash (``sha256:<hex>`` over the article's canonical text) is the duplicate key and
survives every head edit; the git blob sha of the whole file changes with any byte. They answer
different questions and are never substituted for one another (``format.md``, "Two hashes").
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final

from selectolax.lexbor import LexborHTMLParser

from headd.memfile.text import canonical_text, collapse_js

CONTENT_HASH_PREFIX: Final = "sha256:"
_CONTENT_HASH_SHAPE = re.compile(r"sha256:[0-9a-f]{64}")


def blob_sha_of(data: str | bytes) -> str:
    """Git's blob id: sha1 over ``blob <byte length>\\0`` + the bytes (text as UTF-8)."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    digest = hashlib.sha1(b"blob %d\x00" % len(raw))
    digest.update(raw)
    return digest.hexdigest()


def digest_of(canonical: str) -> str:
    """``sha256:<hex>`` of a canonical text's UTF-8 bytes."""
    return CONTENT_HASH_PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def content_hash_of_node(article: Any) -> str:
    """The content hash of a parsed ``<article>`` node (selectolax Lexbor)."""
    return digest_of(canonical_text(article))


def content_hash_of(html: str) -> str:
    """The content hash of a whole memory file, or of bare article inner markup.

    Total, like memhtml's ``contentHash``: a document with an ``<article>`` hashes its first
    article; a string without one is hashed as the article's inner markup (parsed in a wrapping
    ``<article>``, so table rows keep their text). Refusing malformed input is the parser's job.
    """
    text = html[1:] if html.startswith("\ufeff") else html
    tree = LexborHTMLParser(text)
    article = tree.css_first("article")
    if article is None:
        tree = LexborHTMLParser("<!doctype html><html><body><article>" + text)
        article = tree.css_first("article")
    return content_hash_of_node(article)


def is_content_hash(value: str) -> bool:
    """True for a well-formed ``sha256:<64 lowercase hex>``."""
    return _CONTENT_HASH_SHAPE.fullmatch(value) is not None


def chunk_id_of(content_hash: str, ordinal: int) -> str:
    """sha256 hex of ``content_hash + ":" + ordinal``: the same body has the same ids anywhere."""
    return hashlib.sha256(f"{content_hash}:{ordinal}".encode()).hexdigest()


# The claim's slot: everything up to the last linking word a value follows. ASCII word
# boundaries, as in JavaScript; the input is already collapsed to single spaces. ``frame_key_of``
# finds the same match by searching the reversed text for the first reversed linking word (the
# rule as a regex stays the reference in the tests).
FRAME_PATTERN: Final = r"(.*\b(?:of|is|in|to|by|as)\b) +(.+?)\.?"
#: A linking word and the space after it, reversed, not preceded (in reading order) by a word
#: character: its first match in the reversed text is the last linking word of the text.
_LAST_LINK_REVERSED = re.compile(r" (?:fo|si|ni|ot|yb|sa)(?![A-Za-z0-9_])", re.ASCII)
_MIN_FRAME_TOKENS: Final = 3
_MAX_VALUE_TOKENS: Final = 6


def frame_key_of(claim: str, *, collapsed: bool = False) -> str | None:
    """The frame key of a claim (lowercased frame), or None when it states no slot shape.

    JavaScript whitespace runs become one space and the ends are trimmed; the frame must have at
    least three space-separated words and the value at most six. ``collapsed``: the claim is
    ``collapse_ascii`` output (the gist is), which spares a scan.

    The match is ``FRAME_PATTERN``'s: once the text holds single spaces only, the greedy frame
    ends at the last linking word that starts a word (no ASCII word character before it) and is
    followed by a space; the value is the rest, less one final ``.`` when more than that is left.
    The text is searched reversed, so the first match is that last linking word.
    """
    text = collapse_js(claim, collapsed=collapsed)
    match = _LAST_LINK_REVERSED.search(text[::-1])
    if match is None:
        return None
    cut = len(text) - match.end()  # where the last linking word starts
    frame = text[: cut + 2]
    if frame.count(" ") + 1 < _MIN_FRAME_TOKENS:
        return None
    value = text[cut + 3 :]
    if len(value) > 1 and value.endswith("."):
        value = value[:-1]
    if value.count(" ") + 1 > _MAX_VALUE_TOKENS:
        return None
    return frame.lower()
