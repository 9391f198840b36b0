"""Our WordPiece against BERT's rules, a toy vocabulary, and (when installed) the reference."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.embed.onnx_minilm import bundled_tokenizer_path
from headd.embed.wordpiece import (
    MAX_CHARS_PER_WORD,
    WordPieceTokenizer,
    _is_punctuation,
    _is_whitespace,
    _normalize_chars,
    load_tokenizer_json,
    normalize,
    pre_tokenize,
    tokenizer_from_json,
    words_of,
)

TOY_VOCAB = {
    "[PAD]": 0,
    "[UNK]": 1,
    "[CLS]": 2,
    "[SEP]": 3,
    "un": 4,
    "##aff": 5,
    "##able": 6,
    "cafe": 7,
    ",": 8,
    "a": 9,
    "b": 10,
    "##a": 11,
    "東": 12,
    "京": 13,
}


@pytest.fixture(scope="module")
def real() -> WordPieceTokenizer:
    return load_tokenizer_json(bundled_tokenizer_path())


def toy() -> WordPieceTokenizer:
    return WordPieceTokenizer.from_vocab(TOY_VOCAB)


def test_greedy_longest_match_first_with_continuations() -> None:
    assert toy().encode("unaffable", 16) == [2, 4, 5, 6, 3]


def test_a_word_with_an_unknown_piece_is_one_unk() -> None:
    # "unaffx": "un", "##aff", then "##x" is missing, so the whole word is [UNK], not a prefix.
    assert toy().encode("unaffx a", 16) == [2, 1, 9, 3]


def test_overlong_word_is_unk_without_splitting() -> None:
    word = "a" * (MAX_CHARS_PER_WORD + 1)
    assert toy().encode(word, 16) == [2, 1, 3]
    assert toy().encode("a" * MAX_CHARS_PER_WORD, 200)[1:3] == [9, 11]


def test_normalizer_lowercases_strips_accents_and_cleans() -> None:
    assert normalize("CAFÉ") == "cafe"
    assert normalize("e\u0301") == "e"  # combining accent dropped after NFD
    assert normalize("a\x00b\ufffdc\x07d") == "abcd"
    assert normalize("a\tb\nc\u2028d\u00a0e") == "a b c d e"
    assert normalize("東京") == " 東  京 "
    # Lowercasing is per character: a final capital sigma becomes σ, not ς.
    assert normalize("ΟΔΟΣ") == "οδοσ"


def test_pre_tokenizer_isolates_punctuation() -> None:
    assert pre_tokenize("a,b  (c)$") == ["a", ",", "b", "(", "c", ")", "$"]
    assert toy().encode("Café,B", 16) == [2, 7, 8, 10, 3]
    assert toy().encode("東京", 16) == [2, 12, 13, 3]


def test_special_token_literals_in_text_are_plain_text(real: WordPieceTokenizer) -> None:
    ids = real.encode("[MASK]", 16)
    assert real.vocab["[MASK]"] not in ids
    assert ids[0] == real.cls_id and ids[-1] == real.sep_id


def test_batch_pads_right_and_masks(real: WordPieceTokenizer) -> None:
    ids, mask = real.encode_batch(["a b c d", "a"], 16)
    assert ids.shape == mask.shape == (2, 6)
    assert mask.sum(axis=1).tolist() == [6, 3]
    assert ids[1, 3:].tolist() == [real.pad_id] * 3


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=300), small=st.integers(2, 40), extra=st.integers(0, 40))
def test_truncation_keeps_a_framed_prefix(
    real: WordPieceTokenizer, text: str, small: int, extra: int
) -> None:
    tok = real
    short = tok.encode(text, small)
    long = tok.encode(text, small + extra)
    assert len(short) <= small
    assert short[0] == tok.cls_id and short[-1] == tok.sep_id
    assert long[: len(short) - 1] == short[:-1]
    assert all(0 <= i < len(tok.vocab) for i in long)


def test_rejects_tokenizer_json_of_another_kind(tmp_path) -> None:
    doc = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))
    for path, value in (
        (("model", "type"), "BPE"),
        (("normalizer", "lowercase"), False),
        (("pre_tokenizer", "type"), "Whitespace"),
        (("model", "continuing_subword_prefix"), "@@"),
    ):
        bad = json.loads(json.dumps(doc))
        bad[path[0]][path[1]] = value
        with pytest.raises(ValueError):
            tokenizer_from_json(bad)
    assert tokenizer_from_json(doc).vocab == doc["model"]["vocab"]


def test_max_length_below_two_is_refused() -> None:
    with pytest.raises(ValueError):
        toy().encode("a", 1)


# --- against Hugging Face's tokenizers, the reference, when it is installed ------------------

ADVERSARIAL = [
    "Ünïcödé café ΣΑΣ naïve 東京タワー e\u0301 \u2028x\u0085y \x0bz\ufffd w\u200bq",
    "İstanbul ǅ ß ﬁ Ⅻ ① ²",
    "p53-mediated G(1)/S arrest; IL-6 (n = 12) p<0.05 — 95% CI [1.2, 3.4]",
    "a" * 150 + " " + "b" * 99,
    "",
    "   \t\n ",
]


@pytest.fixture(scope="module")
def reference():
    """The reference tokenizer at 256 tokens; the check is skipped only where it is absent."""
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(bundled_tokenizer_path()))
    ref.no_padding()
    ref.enable_truncation(256)
    return ref


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_matches_reference_on_hard_cases(real: WordPieceTokenizer, reference, text: str) -> None:
    assert real.encode(text, 256) == reference.encode(text).ids


# Documented differences are kept out: bracketed special-token literals, and code points the two
# sides' Unicode tables may disagree on. The reference's tables are older than Python 3.11's (e.g.
# U+10F55, Sogdian punctuation since Unicode 11, is a word character to it), so the text draws
# only on code points Unicode 3.2 already assigned with the category they have now
# (``unicodedata.ucd_3_2_0``): over all 232,656 of them the two tokenizers agree (checked once,
# 'a' + c + 'b' for every c). Lone surrogates cannot reach the reference at all.
def _stable_since_3_2(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category not in ("Cn", "Cs") and unicodedata.ucd_3_2_0.category(ch) == category


_comparable = st.text(
    alphabet=st.characters(blacklist_categories=("Cn", "Cs")).filter(_stable_since_3_2),
    max_size=120,
).filter(lambda s: "[" not in s)


@settings(max_examples=40, deadline=None)
@given(text=_comparable)
def test_matches_reference_on_any_text(real: WordPieceTokenizer, reference, text: str) -> None:
    assert real.encode(text, 256) == reference.encode(text).ids


# --- the translate tables against the rules stated character by character --------------------


def _pre_tokenize_by_rule(normalized: str) -> list[str]:
    words: list[str] = []
    current: list[str] = []
    for ch in normalized:
        if _is_whitespace(ch) or _is_punctuation(ch):
            if current:
                words.append("".join(current))
                current = []
            if not _is_whitespace(ch):
                words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


def _spacing_mark_in(ch: str) -> bool:
    decomposed = unicodedata.normalize("NFD", ch)
    return any(unicodedata.combining(c) and unicodedata.category(c) != "Mn" for c in decomposed)


def test_tables_follow_the_rules_across_the_bmp() -> None:
    # Every code point below U+0800 (Latin, Greek, Cyrillic, ..., and the controls), then every
    # 13th: learning a character costs the tables ~10 us, so all 65k would take seconds. Texts
    # with a spacing mark that has a combining class take the whole-text path (next test).
    sample = [*range(0x800), *range(0x800, 0x10000, 13)]
    for start in range(0, len(sample), 1024):
        chars = [
            chr(cp)
            for cp in sample[start : start + 1024]
            if not 0xD800 <= cp <= 0xDFFF and not _spacing_mark_in(chr(cp))
        ]
        text = "".join(f"A{ch}b{ch}." for ch in chars)
        expected = _normalize_chars(text)
        assert normalize(text) == expected, hex(start)
        assert words_of(text) == _pre_tokenize_by_rule(expected), hex(start)


def test_spacing_marks_with_a_combining_class_take_the_whole_text_path() -> None:
    # U+1D16D (Mc, class 226) then U+1D165 (Mc, class 216): NFD swaps the two and, both being
    # spacing, both stay; character by character they would keep their typed order.
    swapped = "x\U0001d16d\U0001d165y"
    assert normalize(swapped) == "x\U0001d165\U0001d16dy"
    for text in [swapped, "e\u0301\U0001d165x", "\U0001d165\u0316a", "A\u1b44\u0301,b"]:
        assert normalize(text) == _normalize_chars(text)
        assert words_of(text) == _pre_tokenize_by_rule(_normalize_chars(text))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_the_query_key_embeds_as_its_text_does(real: WordPieceTokenizer, text: str) -> None:
    """The query cache's key (``OnnxEmbedder.query_key``) holds the text's word pieces: texts
    with one key get one vector, so a cached vector may answer any of them."""
    from headd.embed.onnx_minilm import MAX_TOKENS, OnnxEmbedder

    key = OnnxEmbedder().query_key(text)
    assert real.encode(key, MAX_TOKENS) == real.encode(text, MAX_TOKENS)
    assert OnnxEmbedder().query_key(key) == key


def test_the_query_key_folds_case_spacing_and_accents() -> None:
    from headd.embed.onnx_minilm import OnnxEmbedder

    key = OnnxEmbedder().query_key
    assert key("What is  Postgres's\tcafé?") == key("what is postgres ' s cafe ?")
    assert key("postgres orders") != key("postgres order")
