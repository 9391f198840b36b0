"""``headd.head.relevance``: a query's coverage by a memory, the prompt hook's floor."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.memory import memory_html

from headd.head.blob_parse import parse_record
from headd.head.indexes import indexes_of
from headd.head.relevance import coverage, query_words, relevant_hits
from headd.head.search import search_head
from headd.head.version import version_from_records

MEMORIES = {
    "areas/inbox/pool.html": ("Connection pool", "The connection pool holds forty connections."),
    "areas/inbox/cat.html": ("Pet", "Dana adopted a grey cat named Miso."),
    "areas/inbox/shards.html": ("Shards", "The search cluster runs eight shards."),
}
VIEW = version_from_records(
    [parse_record(p, memory_html(t, c)) for p, (t, c) in MEMORIES.items()], "sha"
)


def test_a_memory_holding_every_word_covers_the_query_and_an_unknown_word_weighs() -> None:
    indexes = indexes_of(VIEW)
    paths = list(MEMORIES)
    full, cat, shards = coverage(indexes, "does the pool hold forty connections?", paths)
    assert full == 1.0 and cat == 0.0 and shards == 0.0
    [haiku] = coverage(indexes, "write a haiku about cats", ["areas/inbox/cat.html"])
    assert 0.0 < haiku < 0.4  # "cat" is held, "write" and "haiku" are not


def test_relevant_hits_drop_trivial_and_unrelated_prompts() -> None:
    for prompt in ("ok", "cats", "write a haiku about cats"):
        hits = search_head(VIEW, prompt, limit=5)
        assert relevant_hits(VIEW, prompt, hits, 0.4) == ([], []), prompt
    hits = search_head(VIEW, "shards the search cluster runs", limit=5)
    kept, shares = relevant_hits(VIEW, "shards the search cluster runs", hits, 0.4)
    assert [h.path for h in kept] == ["areas/inbox/shards.html"] and shares[0] >= 0.4


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefg poolcatshrd", max_size=40))
def test_coverage_is_a_share(query: str) -> None:
    shares = coverage(indexes_of(VIEW), query, list(MEMORIES))
    assert all(0.0 <= s <= 1.0 + 1e-9 for s in shares)
    if not query_words(query):
        assert shares == [0.0] * len(MEMORIES)
