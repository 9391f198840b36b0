"""The hybrid search's questions about time: "when did…" favours the memories that say when
(``headd.head.temporal``). Records are parsed memory files; vectors are built by hand."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.head_corpus import MapView
from support.memory import memory_html

from headd.head.search import SEED_EXACT, search_head
from headd.head.temporal import TIME_BONUS, asks_when, favour_times, tells_time
from headd.head.version import parse_record
from headd.record import MemoryRecord


def memory(path: str, claim: str, *, article: str | None = None) -> MemoryRecord:
    return parse_record(path, memory_html(claim=claim, article=article, content_hash=True))


def test_a_question_asks_when_by_its_first_words() -> None:
    assert asks_when("When did Ana adopt Pixel?")
    assert asks_when("  how long has Ben lived in Oslo?")
    assert not asks_when("What did Ana adopt?")
    assert not asks_when("Whenever it rains")
    assert not asks_when("Since when")


def test_a_memory_tells_a_time_by_a_word_of_time_or_a_time_element() -> None:
    assert tells_time(memory("areas/a/1.html", "We got her last spring."))
    assert tells_time(memory("areas/a/2.html", "Back in 2019 it snowed."))
    assert not tells_time(memory("areas/a/3.html", "Ana adopted a grey cat."))
    below = memory_html(claim="Ana: hi!", body="Ben: we met last June.", content_hash=True)
    assert tells_time(parse_record("areas/a/5.html", below)), "a word of time below the claim"
    dated = memory(
        "areas/a/4.html",
        "Adopted.",
        article='<p><mark>Adopted.</mark> <time datetime="2023-05-08">then</time></p>',
    )
    assert dated.event_at == "2023-05-08" and tells_time(dated)


def test_when_the_question_asks_when_the_memory_that_says_when_ranks_first() -> None:
    """The two memories match the question's words alike and the named one is nearer by
    cosine; asked when, the one that says when comes first."""
    records = [
        memory("areas/a/named.html", "Ana adopted Pixel, a grey cat."),
        memory("areas/a/dated.html", "Ana adopted Pixel last spring."),
        memory("areas/a/other.html", "Ben went hiking in the Alps."),
    ]
    axes = {"named": [1.0, 0.0, 0.0], "dated": [0.8, 0.6, 0.0], "other": [0.0, 0.0, 1.0]}
    vectors = {
        r.content_hash: np.array(axes[r.path.rsplit("/", 1)[1][:-5]], dtype=np.float32)
        for r in records
    }
    query_vector = np.array([1.0, 0.0, 0.0])
    view = MapView(records)

    def order(question: str) -> list[str]:
        hits = search_head(view, question, vectors=vectors, query_vector=query_vector)
        return [hit.path for hit in hits]

    assert order("Did Ana adopt Pixel?")[:2] == ["areas/a/named.html", "areas/a/dated.html"]
    assert order("When did Ana adopt Pixel?")[:2] == ["areas/a/dated.html", "areas/a/named.html"]
    assert search_head(view, "When did Ana adopt Pixel?") == search_head(
        view, "When did Ana adopt Pixel?", mode=SEED_EXACT
    ), "without the vector arm the answer is the seed's"


claims = st.lists(
    st.tuples(
        st.sampled_from(["Ana adopted Pixel.", "Last week it rained.", "In July we swam."]),
        st.floats(0.001, 1.0),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(claims, st.sampled_from(["When did it rain?", "Did it rain?", "how long did it rain"]))
def test_only_a_question_asking_when_moves_a_score_and_only_by_the_bonus(
    rows: list[tuple[str, float]], query: str
) -> None:
    """Invariant: a query not asking when changes nothing; one asking when adds
    :data:`TIME_BONUS` to the memories that tell a time and nothing to the others."""
    records = {f"areas/a/{i}.html": memory(f"areas/a/{i}.html", c) for i, (c, _) in enumerate(rows)}
    fused = {path: score for path, (_c, score) in zip(records, rows, strict=True)}
    favoured = favour_times(query, fused, records.get)
    for path, score in fused.items():
        told = asks_when(query) and tells_time(records[path])
        assert favoured[path] == (score + TIME_BONUS if told else score)
