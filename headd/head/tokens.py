"""The lexical arm's tokens: a record's indexed text split, lowercased and stripped of stop words.

Pure Python over the standard library on purpose: a load's parse workers
(``headd.head.parse_worker``) tokenize and code every record, and a worker that imported numpy
or the index (``lexical.py``) would start several times slower. ``lexical.py`` re-exports all of it.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from headd.record import MemoryRecord

#: English function words dropped before indexing and before scoring a query: a short closed
#: list (57 words), because a longer one starts dropping content words a memory corpus is
#: searched by (``system``, ``time``).
STOP_WORDS: Final[frozenset[str]] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "s",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
    ]
)

# Python's Unicode ``\w`` is letters (L*), numbers (N*) and underscore: exactly memhtml's
# ``[\p{L}\p{N}_]``. A token is a maximal run of them, which is what splitting on the complement
# and dropping empties yields.
_WORD_RUN = re.compile(r"\w+")

# The same split for ASCII text, without the regex engine, as one byte table: an uppercase
# letter becomes its lowercase, any other character that is not a letter, digit or underscore a
# space, then ``split``. A byte table is one lookup per byte where ``str.translate`` hashes each
# character into a dict: measured ~12 % off a 10,000-record load's tokenizing (which the regex
# is ~5x slower than).
_ASCII_FOLD: Final = bytes(
    c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(128)
) + bytes(range(128, 256))


def tokenize(text: str) -> list[str]:
    """Lowercase, split on runs of characters other than letters, numbers and ``_``, drop stop words."""
    if text.isascii():
        words = text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()
    else:
        words = _WORD_RUN.findall(text.lower())
    return [token for token in words if token not in STOP_WORDS]


def indexed_text(record: MemoryRecord) -> str:
    """What a record is indexed by: its title, its claim, then its whole body (which opens with
    the claim, so the claim's words count twice)."""
    return f"{record.title} {record.claim} {record.body_text}"


class _Vocabulary(dict[str, int]):
    """Token -> its position in first-occurrence order, a new token taking the next position.

    Looking a token up through ``__getitem__`` stays in C for a known token (the common case),
    which is why this is a ``dict`` with ``__missing__`` rather than ``setdefault`` and a counter.
    """

    def __missing__(self, token: str) -> int:
        code = self[token] = len(self)
        return code


def code_token_lists(documents: Iterable[list[str]]) -> tuple[list[str], array[int], list[int]]:
    """Several documents' tokens as the run's vocabulary (first-occurrence order), every token
    as its position in it (document after document, int32) and each document's token count."""
    vocabulary = _Vocabulary()
    lookup = vocabulary.__getitem__
    codes = array("i")
    sizes: list[int] = []
    for tokens in documents:
        sizes.append(len(tokens))
        codes.extend(map(lookup, tokens))
    return list(vocabulary), codes, sizes
