"""Chunked vectors for the quality bench: a memory's article cut into passages the model sees
whole, and a vector arm whose cosine for a memory is the best of its rows' (max-sim).

The model reads 160 word pieces of a text; a SciFact abstract runs to about 300. Cutting the
article into passages lets the vector arm see all of it. The first passage is the article's own
vector (the record's, title included); each further one is the article from that passage's
first word on (the model stops reading after the passage), its row ``unit(passage) +
TITLE_WEIGHT * unit(title)`` as a record's vector is made. The daemon keeps no passage vectors:
this is the bench's way to measure the lever (``python -m bench.quality_bench --passages``;
figures in docs/design/search-quality.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from headd.head.ids import utf16_key
from headd.head.vectors import VectorCache, record_vector, title_text_of
from headd.record import MemoryRecord

#: Word pieces a passage holds: the model's 160 less ``[CLS]`` and ``[SEP]``.
PASSAGE_PIECES = 158


def bundled_pieces() -> Callable[[str], int]:
    """How many word pieces the bundled tokenizer cuts a word into."""
    from headd.embed.onnx_minilm import bundled_tokenizer_path
    from headd.embed.wordpiece import load_tokenizer_json

    tokenizer = load_tokenizer_json(bundled_tokenizer_path())
    return lambda word: len(tokenizer.encode(word, 1 << 16)) - 2


def passages_of(
    text: str, pieces_of: Callable[[str], int], budget: int = PASSAGE_PIECES
) -> list[str]:
    """The passages after the first: the text's words from each passage start on, a passage
    starting at the first word that would take the one before past ``budget`` pieces (a word
    longer than the budget is a passage of its own)."""
    words = text.split()
    starts: list[int] = []
    start, used = 0, 0
    for index, word in enumerate(words):
        pieces = pieces_of(word)
        if used + pieces > budget and index > start:
            starts.append(index)
            start, used = index, 0
        used += pieces
    return [" ".join(words[s:]) for s in starts]


#: Where a sentence ends: a full stop, question or exclamation mark (a closing bracket or quote
#: may follow it) and a space before a capital, a digit or an opening bracket (abbreviations
#: like "e.g. the" stay whole).
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][)\]\"']))\s+(?=[A-Z0-9(\[])")


def sentences_of(text: str, _pieces_of: Callable[[str], int] | None = None) -> list[str]:
    """The text's sentences, each a passage, when it has more than one (a one-sentence text is
    its record's own vector already)."""
    sentences = [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
    return sentences if len(sentences) > 1 else []


def sentence_pairs_of(text: str, _pieces_of: Callable[[str], int] | None = None) -> list[str]:
    """Each two sentences in a row, a passage (a one-sentence text has none)."""
    sentences = sentences_of(text)
    return [f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False)]


#: How ``--passages`` cuts an article (windows of word pieces, sentences, or two sentences in a
#: row), and whether each passage's row adds the title's vector as a record's vector does.
UNITS: dict[str, tuple[Callable[..., list[str]], bool]] = {
    "pieces": (passages_of, True),
    "sentences": (sentences_of, True),
    "bare-sentences": (sentences_of, False),
    "sentence-pairs": (sentence_pairs_of, True),
}


class PassageMatrix:
    """Every record's vector and its passages' rows, unit length, grouped by record (in path
    order); :meth:`ranked` answers as ``VersionMatrix.ranked`` does, a record's cosine the best
    of its rows."""

    def __init__(
        self,
        records: Sequence[MemoryRecord],
        rows: npt.NDArray[np.float64],
        starts: npt.NDArray[np.intp],
    ) -> None:
        self.records = list(records)
        self.keys = [utf16_key(r.path) for r in self.records]
        self.rows = rows
        self.starts = starts

    @classmethod
    def build(
        cls,
        view: Any,
        cache: VectorCache,
        embedder: Any,
        pieces_of: Callable[[str], int],
        unit: str = "pieces",
    ) -> PassageMatrix:
        cut, with_title = UNITS[unit]
        records: list[MemoryRecord] = []
        vectors: list[npt.NDArray[np.float32]] = []
        texts: list[str] = []
        owners: list[int] = []
        for record in sorted(view.records(), key=lambda r: r.path):
            vector = cache.vector_of(record)
            if vector is None:
                continue
            records.append(record)
            vectors.append(np.asarray(vector, dtype=np.float32))
            for passage in cut(record.body_text.strip(), pieces_of):
                texts.append(passage)
                owners.append(len(records) - 1)
        titles = [title_text_of(records[o]) if with_title else "" for o in owners]
        embedded = embedder.embed(texts + [t for t in titles if t]) if texts else []
        title_rows = iter(embedded[len(texts) :])
        extra: list[list[npt.NDArray[np.float32]]] = [[] for _ in records]
        for index, owner in enumerate(owners):
            title = next(title_rows) if titles[index] else None
            extra[owner].append(record_vector(np.asarray(embedded[index]), title))
        grouped: list[npt.NDArray[np.float32]] = []
        starts: list[int] = []
        for vector, more in zip(vectors, extra, strict=True):
            starts.append(len(grouped))
            grouped.append(vector)
            grouped.extend(more)
        matrix = np.stack(grouped).astype(np.float64) if grouped else np.zeros((0, 1))
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        return cls(records, matrix, np.asarray(starts, dtype=np.intp))

    def ranked(
        self,
        query_vector: npt.ArrayLike,
        admit: Callable[[MemoryRecord], bool] | None,
        limit: int,
    ) -> list[tuple[float, str, str]]:
        """(best cosine, utf16 key, path) of the ``limit`` best admitted records, cosine
        descending then key."""
        if not self.records:
            return []
        query = np.asarray(query_vector, dtype=np.float64)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        best = np.maximum.reduceat(self.rows @ (query / norm), self.starts).tolist()
        order = sorted(range(len(self.records)), key=lambda i: (-best[i], self.keys[i]))
        kept: list[tuple[float, str, str]] = []
        for index in order:
            record = self.records[index]
            if admit is not None and not admit(record):
                continue
            kept.append((best[index], self.keys[index], record.path))
            if len(kept) == limit:
                break
        return kept
