"""The hybrid lexical arm scores by stems: grouped BM25 against a stemmed reference index, the
forms a query word finds, and the modes that stay unstemmed (seed-exact, and no vectors)."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from pyrsistent import pmap
from support.head_corpus import MapView
from support.memory import memory_html

from headd.embed.hashing import HashingEmbedder
from headd.head.ids import PATH_IDS
from headd.head.lexical import LexicalBuilder, bm25_group_scores, bm25_scores
from headd.head.search import SEED_EXACT, search_head
from headd.head.stems import candidate_forms, stem, stem_groups
from headd.head.version import parse_record
from headd.record import MemoryRecord

EMBEDDER = HashingEmbedder(dimension=32)
#: Words with several forms of one stem among them, and some with one form.
FORMS = [
    "study", "studies", "studied", "studying", "run", "running", "runs", "cell", "cells",
    "cellular", "activate", "activation", "activated", "active", "basalt", "care", "caring",
    "cared", "general", "generally", "mice", "mouse", "ran",
]  # fmt: skip
DOC = st.lists(st.sampled_from(FORMS), min_size=1, max_size=8).map(" ".join)
QUERY = st.lists(st.sampled_from(FORMS), min_size=1, max_size=4).map(" ".join)


def _index(texts: list[str], prefix: str) -> tuple[LexicalBuilder, dict[str, Counter[str]]]:
    builder = LexicalBuilder()
    docs: dict[str, Counter[str]] = {}
    for i, text in enumerate(texts):
        path = f"{prefix}/d{i}.html"
        docs[path] = Counter(text.split())
        builder.add(PATH_IDS.intern(path), dict(docs[path]))
    return builder, docs


def _scores(ids: object, scores: object) -> dict[str, float]:
    return {PATH_IDS.path(int(i)): float(s) for i, s in zip(ids, scores, strict=True)}  # type: ignore[call-overload]


@settings(max_examples=80, deadline=None)
@given(st.lists(DOC, max_size=12), QUERY)
def test_groups_of_one_token_score_as_bm25_bit_for_bit(texts: list[str], query: str) -> None:
    builder, _docs = _index(texts, "stems-one")
    lexical = builder.freeze()
    groups = [(token,) for token in dict.fromkeys(query.split())]
    assert _scores(*bm25_group_scores(lexical, groups)) == _scores(*bm25_scores(lexical, query))


@settings(max_examples=80, deadline=None)
@given(st.lists(DOC, max_size=12), QUERY)
def test_stemmed_scores_are_bm25_over_a_stemmed_index(texts: list[str], query: str) -> None:
    """Invariant: grouping the unstemmed index by the query's stems gives the scores of BM25
    over an index of stems (same lengths: stemming changes no token count). Every form of
    ``FORMS`` is one the suffix rules generate, so here the groups are complete."""
    builder, _docs = _index(texts, "stems-group")
    lexical = builder.freeze()
    got = _scores(*bm25_group_scores(lexical, stem_groups(lexical.postings, query)))
    stemmed, _ = _index([" ".join(stem(w) for w in t.split()) for t in texts], "stems-group")
    query_stems = " ".join(stem(w) for w in query.split())
    want = _scores(*bm25_scores(stemmed.freeze(), query_stems))
    assert got.keys() == want.keys()
    for path, score in got.items():
        assert math.isclose(score, want[path], rel_tol=1e-12)


def test_a_group_holds_only_forms_of_the_query_words_stem() -> None:
    vocabulary = dict.fromkeys(FORMS + ["studio", "runner", "careful", "activism"])
    groups = stem_groups(vocabulary, "What studies ran? She runs. Caring cells activated, studied")
    assert groups == [
        ("studies", "studied", "study", "studying"),
        ("ran",),  # an irregular form no suffix rule reaches: "run" is another stem
        ("runs", "run", "running"),  # "runner" is generated ("runn" + "er") but its own stem
        ("caring", "care", "cared"),
        ("cells", "cell"),
        ("activated", "active", "activation", "activate"),
    ], "one group per stem, the query's own token first; studio and runner are other stems"
    # Snowball stems "careful" to "care" and "activism" to "activ", but no suffix rule makes
    # them: a form missed, never a wrong one
    assert stem("careful") == "care" and stem("activism") == "activ"
    assert stem_groups(vocabulary, "zircon") == []


def _memory(path: str, claim: str) -> MemoryRecord:
    return parse_record(path, memory_html(content_hash=True, title="Note", claim=claim))


def test_the_hybrid_search_finds_other_forms_and_the_seed_does_not() -> None:
    records = [
        _memory("areas/a/studied.html", "The mice were studied for a year."),
        _memory("areas/a/other.html", "Basalt is volcanic."),
    ]
    view = MapView(records)
    vectors = {r.content_hash: EMBEDDER.embed([r.claim])[0] for r in records}
    query_vector = EMBEDDER.embed(["unrelated"])[0]
    hybrid = search_head(view, "studies", vectors=vectors, query_vector=query_vector)
    assert [hit.path for hit in hybrid if "lexical" in hit.arms] == ["areas/a/studied.html"]
    seed = search_head(view, "studies", vectors=vectors, query_vector=query_vector, mode=SEED_EXACT)
    assert not any("lexical" in hit.arms for hit in seed), "the seed matches tokens exactly"
    assert search_head(view, "studies") == [], "without vectors the answer is the seed's"


def test_every_generated_form_is_a_candidate_and_the_token_comes_first() -> None:
    for word in FORMS:
        forms = candidate_forms(word)
        assert forms[0] == word and len(set(forms)) == len(forms)
        same_stem = [w for w in FORMS if stem(w) == stem(word)]
        assert set(same_stem) <= set(forms), f"{word}: a form of its stem is not generated"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FORMS), max_size=20), st.lists(QUERY, min_size=1, max_size=4))
def test_remembered_forms_are_the_forms_looked_up(
    vocabulary: list[str], queries: list[str]
) -> None:
    """Invariant: a persistent vocabulary's remembered forms (looked up once per token) give
    the groups a plain dict, looked up every time, gives, query after query."""
    plain = dict.fromkeys(vocabulary)
    persistent = pmap(plain)
    for query in queries:
        assert stem_groups(persistent, query) == stem_groups(plain, query)
    grown = persistent.set("studying", None)  # a new version: its own memo
    assert stem_groups(grown, "study") == stem_groups({**plain, "studying": None}, "study")
