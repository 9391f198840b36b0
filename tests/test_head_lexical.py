"""The lexical index: tokenizer, bucket builders and BM25, against plain-Python references."""

from __future__ import annotations

import math
import re

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.head.ids import PATH_IDS
from headd.head.lexical import (
    LENGTH_CHUNK,
    STOP_WORDS,
    LexicalBuilder,
    _apply,
    _build,
    _bulk_build,
    bm25_scores,
    code_tokens,
    term_frequencies,
    tokenize,
)
from headd.head.version import parse_record

_REFERENCE_SPLIT = re.compile(r"[^\w]+")


def reference_tokenize(text: str) -> list[str]:
    return [t for t in _REFERENCE_SPLIT.split(text.lower()) if t and t not in STOP_WORDS]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_tokenize_matches_the_regex_reference_on_any_text(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_the_ascii_fast_path_matches_the_reference(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)


BUCKETS = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(12)]),
    st.dictionaries(st.integers(0, 40), st.integers(1, 6), max_size=10),
    max_size=12,
)


@settings(max_examples=100, deadline=None)
@given(BUCKETS)
def test_the_bulk_bucket_build_equals_one_bucket_at_a_time(sets: dict[str, dict[int, int]]) -> None:
    assert _bulk_build(sets) == {t: _build(d) for t, d in sets.items() if d}
    for bucket in _bulk_build(sets).values():
        assert not bucket.ids.flags.writeable and not bucket.tfs.flags.writeable
        assert list(bucket.ids) == sorted(bucket.ids)


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "the", "zeta", "eta", "theta"])
DOC = st.lists(WORDS, min_size=0, max_size=8).map(" ".join)
EDITS = st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), DOC)), min_size=1, max_size=25)


def _freqs(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for token in tokenize(text):
        out[token] = out.get(token, 0) + 1
    return out


@settings(max_examples=80, deadline=None)
@given(EDITS, st.integers(1, 4))
def test_incremental_edits_equal_a_fresh_build(
    edits: list[tuple[int, str | None]], batches: int
) -> None:
    ids = [PATH_IDS.intern(f"lexical-test/doc-{i}.html") for i in range(8)]
    docs: dict[int, dict[str, int]] = {}
    index = LexicalBuilder().freeze()
    chunk = max(1, len(edits) // batches)
    for start in range(0, len(edits), chunk):
        builder = LexicalBuilder(index)
        for slot, text in edits[start : start + chunk]:
            ident = ids[slot]
            if text is None:
                if ident in docs:
                    builder.remove(ident, docs.pop(ident))
            elif ident in docs:
                builder.replace(ident, docs[ident], _freqs(text))
                docs[ident] = _freqs(text)
            else:
                builder.add(ident, _freqs(text))
                docs[ident] = _freqs(text)
        before = index
        index = builder.freeze()
        assert before == before  # the parent is a value
    fresh = LexicalBuilder()
    for ident, freqs in docs.items():
        fresh.add(ident, freqs)
    expected = fresh.freeze()
    assert index == expected
    assert index.doc_count == len(docs)
    assert index.total_length == sum(sum(f.values()) for f in docs.values())


def reference_bm25(docs: dict[str, dict[str, int]], query: str) -> dict[str, float]:
    """memhtml's lexicalArm, line for line, over plain dicts."""
    n = len(docs)
    if n == 0:
        return {}
    average = sum(sum(f.values()) for f in docs.values()) / n
    scores: dict[str, float] = {}
    for token in dict.fromkeys(tokenize(query)):
        holders = {p: f[token] for p, f in docs.items() if token in f}
        if not holders:
            continue
        idf = math.log((n - len(holders) + 0.5) / (len(holders) + 0.5) + 1)
        for path, tf in holders.items():
            length = sum(docs[path].values())
            normalized = (tf * (1.2 + 1)) / (
                tf + 1.2 * (1 - 0.75 + (0.75 * length) / (average or 1))
            )
            scores[path] = scores.get(path, 0) + idf * normalized
    return scores


@settings(max_examples=80, deadline=None)
@given(st.lists(DOC, min_size=0, max_size=12), st.lists(WORDS, max_size=5).map(" ".join))
def test_bm25_equals_the_reference_bit_for_bit(texts: list[str], query: str) -> None:
    builder = LexicalBuilder()
    docs: dict[str, dict[str, int]] = {}
    for i, text in enumerate(texts):
        path = f"bm25-test/d{i}.html"
        docs[path] = _freqs(text)
        builder.add(PATH_IDS.intern(path), docs[path])
    ids, scores = bm25_scores(builder.freeze(), query)
    got = {PATH_IDS.path(int(i)): float(s) for i, s in zip(ids, scores, strict=True)}
    assert got == reference_bm25(docs, query)


def test_a_record_is_indexed_by_title_claim_and_body() -> None:
    record = parse_record(
        "areas/inbox/x.html",
        memory_html(
            content_hash=True,
            title="Kafka lag",
            claim="Lag exceeded ten minutes.",
            created="2026-01-01T00:00:00Z",
            body=("Partitions moved.",),
        ),
    )
    assert term_frequencies(record) == {
        "kafka": 1,
        "lag": 3,
        "exceeded": 2,
        "ten": 2,
        "minutes": 2,
        "partitions": 1,
        "moved": 1,
    }
    assert term_frequencies(msgspec.structs.replace(record, title=""))["lag"] == 2


@settings(max_examples=80, deadline=None)
@given(EDITS)
def test_a_bulk_filled_builder_equals_one_filled_per_token(
    edits: list[tuple[int, str | None]],
) -> None:
    ids = [PATH_IDS.intern(f"lexical-bulk/doc-{i}.html") for i in range(8)]
    # Adds only (a load), in an arbitrary id order; then the same edits with removes mixed in,
    # which leave bulk mode part way.
    bulk = LexicalBuilder()
    per_token = LexicalBuilder()
    per_token._leave_bulk()
    seen: set[int] = set()
    for slot, text in edits:
        ident = ids[slot]
        if text is None or ident in seen:
            continue
        seen.add(ident)
        bulk.add(ident, _freqs(text))
        per_token.add(ident, _freqs(text))
    assert bulk.freeze() == per_token.freeze()
    mixed = LexicalBuilder()
    docs: dict[int, dict[str, int]] = {}
    for slot, text in edits:
        ident = ids[slot]
        if text is None:
            if ident in docs:
                mixed.remove(ident, docs.pop(ident))
        elif ident in docs:
            mixed.replace(ident, docs[ident], _freqs(text))
            docs[ident] = _freqs(text)
        else:
            mixed.add(ident, _freqs(text))
            docs[ident] = _freqs(text)
    fresh = LexicalBuilder()
    fresh._leave_bulk()
    for ident, freqs in docs.items():
        fresh.add(ident, freqs)
    assert mixed.freeze() == fresh.freeze()


@settings(max_examples=80, deadline=None)
@given(st.lists(DOC, max_size=12), st.integers(1, 5))
def test_coded_runs_index_what_the_tokens_do(texts: list[str], run_size: int) -> None:
    """``add_coded`` (a parallel load's runs) builds the index ``add_tokens`` builds, in bulk
    mode and past it; ``code_tokens`` round-trips every document's tokens."""
    ids = [PATH_IDS.intern(f"lexical-coded/doc-{i}.html") for i in range(len(texts))]
    documents = [tokenize(text) for text in texts]
    names, codes, sizes = code_tokens(documents)
    assert sizes == [len(tokens) for tokens in documents]
    assert [names[c] for c in codes.tolist()] == [t for tokens in documents for t in tokens]
    by_tokens = LexicalBuilder()
    for ident, tokens in zip(ids, documents, strict=True):
        by_tokens.add_tokens(ident, tokens)
    expected = by_tokens.freeze()
    for leave_bulk in (False, True):
        coded = LexicalBuilder()
        if leave_bulk:
            coded._leave_bulk()
        for start in range(0, len(texts), run_size):
            coded.add_coded(
                ids[start : start + run_size], code_tokens(documents[start : start + run_size])
            )
        assert coded.freeze() == expected
    per_token = LexicalBuilder()
    per_token._leave_bulk()
    for ident, text in zip(ids, texts, strict=True):
        per_token.add(ident, _freqs(text))
    assert per_token.freeze() == expected


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 3 * LENGTH_CHUNK),
    st.lists(
        st.tuples(st.integers(0, 4 * LENGTH_CHUNK), st.integers(0, 6), st.booleans()), max_size=12
    ),
)
def test_lengths_in_chunks_equal_a_whole_array_and_share_what_an_edit_misses(
    loaded: int, edits: list[tuple[int, int, bool]]
) -> None:
    # A load's lengths, then batches of adds, replaces and removes, each frozen: every version's
    # lengths equal a plain dict's, every chunk an edit did not touch is the parent's object.
    builder = LexicalBuilder()
    expected: dict[int, int] = {}
    for ident in range(loaded):
        builder.add_tokens(ident, ["w"] * (1 + ident % 3))
        expected[ident] = 1 + ident % 3
    index = builder.freeze()
    for ident, count, drop in edits:
        parent = index
        builder = LexicalBuilder(parent)
        if drop:
            builder.remove(ident, {"w": expected[ident]} if ident in expected else {})
            expected.pop(ident, None)
        elif ident in expected:
            builder.replace(ident, {"w": expected[ident]}, {"w": count + 1})
            expected[ident] = count + 1
        else:
            builder.add(ident, {"w": count + 1})
            expected[ident] = count + 1
        index = builder.freeze()
        lengths = index.lengths
        assert index.capacity == lengths.shape[0] >= max(expected, default=-1) + 1
        held = {i: int(lengths[i]) for i in range(lengths.shape[0]) if lengths[i] >= 0}
        assert held == expected
        assert all(index.length_of(i) == expected.get(i) for i in (ident, ident + 1, 0))
        chunks = index.length_chunks
        assert all(c.shape[0] == LENGTH_CHUNK for c in chunks[:-1])
        assert all(not c.flags.writeable for c in chunks)
        for position, chunk in enumerate(parent.length_chunks):
            if position != ident // LENGTH_CHUNK and position < len(parent.length_chunks) - 1:
                assert chunks[position] is chunk


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.integers(0, 60), st.integers(1, 9), min_size=1, max_size=30),
    st.integers(0, 60),
    st.one_of(st.none(), st.integers(1, 9)),
)
def test_one_document_edit_of_a_bucket_equals_its_fresh_build(
    bucket: dict[int, int], ident: int, count: int | None
) -> None:
    """An advance's common case (one document set or dropped in a bucket, ``_apply_one``),
    anywhere in the bucket, equals the bucket built from scratch."""
    expected = dict(bucket)
    if count is None:
        expected.pop(ident, None)
        got = _apply(_build(bucket), None, {ident})
    else:
        expected[ident] = count
        got = _apply(_build(bucket), {ident: count}, None)
    if not expected:
        assert got is None
        return
    assert got is not None
    want = _build(expected)
    assert got.ids.tolist() == want.ids.tolist() and got.tfs.tolist() == want.tfs.tolist()
    assert got.ids.dtype == want.ids.dtype and got.tfs.dtype == want.tfs.dtype
