"""The hybrid search's conversation threads: a turn moves toward the best-scored turn of its
session (``headd.head.threads``). Records are parsed memory files; vectors come from the
deterministic hashing embedder."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.head_corpus import MapView
from support.memory import memory_html

from headd.embed.hashing import HashingEmbedder
from headd.head.search import SEED_EXACT, search_head
from headd.head.threads import THREAD_LIFT, lift_threads, thread_of
from headd.head.version import parse_record
from headd.record import MemoryRecord

EMBEDDER = HashingEmbedder(dimension=32)
TIMES = ["2023-05-08T13:56:00Z", "2023-06-02T09:00:00Z"]
WORDS = ["hiking", "alps", "summer", "pottery", "class", "july", "boots", "lake"]


def turn(
    path: str, claim: str, *, at: str = TIMES[0], memory_type: str = "episodic"
) -> MemoryRecord:
    html = memory_html(
        title="Ben", claim=claim, memory_type=memory_type, created=at, updated=at, content_hash=True
    )
    return parse_record(path, html)


def paths(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.path for hit in hits]


def test_a_thread_is_the_episodic_memories_of_one_folder_at_one_moment() -> None:
    first = turn("areas/c/s01/turn-001.html", "Hi.")
    assert thread_of(first) == ("areas/c/s01", TIMES[0])
    assert thread_of(turn("areas/c/s01/turn-002.html", "Yo.")) == thread_of(first)
    assert thread_of(turn("areas/c/s01/turn-003.html", "Yo.", at=TIMES[1])) != thread_of(first)
    assert thread_of(turn("areas/c/s02/turn-001.html", "Yo.")) != thread_of(first)
    assert thread_of(turn("areas/c/s01/fact.html", "Yo.", memory_type="semantic")) is None


thread_rows = st.lists(
    st.tuples(
        st.sampled_from(["areas/c/s01", "areas/c/s02"]),
        st.sampled_from(TIMES),
        st.sampled_from(["episodic", "semantic"]),
        st.floats(0.001, 1.0),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=100, deadline=None)
@given(thread_rows)
def test_a_lift_never_lowers_a_score_nor_moves_a_threads_best_or_reorders_a_thread(
    rows: list[tuple[str, str, str, float]],
) -> None:
    """Invariant: every score is at least what it was, the best of each thread and every record
    outside a thread keep theirs, and inside a thread the order stands."""
    records = {
        f"{folder}/r{i:02d}.html": turn(f"{folder}/r{i:02d}.html", "x", at=at, memory_type=kind)
        for i, (folder, at, kind, _score) in enumerate(rows)
    }
    fused = {path: row[3] for path, row in zip(records, rows, strict=True)}
    lifted = lift_threads(fused, records.get)
    assert set(lifted) == set(fused)
    best: dict[object, float] = {}
    for path, score in fused.items():
        key = thread_of(records[path])
        if key is not None:
            best[key] = max(best.get(key, 0.0), score)
    for path, score in fused.items():
        key = thread_of(records[path])
        assert lifted[path] >= score
        if key is None or score == best[key]:
            assert lifted[path] == score
        else:
            assert lifted[path] == score + THREAD_LIFT * (best[key] - score)
        for other, other_score in fused.items():
            if key is not None and thread_of(records[other]) == key and score > other_score:
                assert lifted[path] >= lifted[other]


CONVERSATION = [
    turn("areas/c/s01/turn-001.html", "Did you go hiking in the alps this summer, Ben?"),
    turn("areas/c/s01/turn-002.html", "Yes! In July, for a whole week."),
    turn("areas/c/s02/turn-001.html", "My pottery class meets by the lake.", at=TIMES[1]),
    turn("areas/c/s02/turn-002.html", "The week went by so fast.", at=TIMES[1]),
]


def _as(kind: str) -> list[MemoryRecord]:
    return [
        turn(r.path, r.claim, at=r.created_at or TIMES[0], memory_type=kind) for r in CONVERSATION
    ]


def test_the_answer_beside_the_question_ranks_with_it() -> None:
    """The answering turn shares no word with the question but is lifted by the turn that
    asked it, above a turn of another session; as semantic memories (no threads) it is not."""
    question = "When did Ben go hiking in the alps?"
    query_vector = EMBEDDER.embed([question])[0]
    ranked = {}
    for kind in ("episodic", "semantic"):
        records = _as(kind)
        vectors = {r.content_hash: EMBEDDER.embed([r.claim])[0] for r in records}
        hits = search_head(MapView(records), question, vectors=vectors, query_vector=query_vector)
        ranked[kind] = paths(hits)
    answer, elsewhere = "areas/c/s01/turn-002.html", "areas/c/s02/turn-002.html"
    assert ranked["episodic"][:2] == ["areas/c/s01/turn-001.html", answer]
    assert ranked["semantic"].index(answer) > ranked["semantic"].index(elsewhere)


corpus = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
        st.sampled_from(["areas/c/s01", "areas/c/s02"]),
        st.sampled_from(TIMES),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(corpus, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), st.integers(1, 30))
def test_without_vectors_threads_change_nothing(
    rows: list[tuple[list[str], str, str]], words: list[str], limit: int
) -> None:
    """Invariant: with the vector arm empty the default answers as the seed (the lexical arm's
    order), however the records thread."""
    records = [
        turn(f"{folder}/turn-{i:03d}.html", " ".join(text) + ".", at=at)
        for i, (text, folder, at) in enumerate(rows)
    ]
    view = MapView(records)
    query = " ".join(words)
    assert search_head(view, query, limit=limit) == search_head(
        view, query, limit=limit, mode=SEED_EXACT
    )


@settings(max_examples=40, deadline=None)
@given(corpus, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), st.integers(1, 30))
def test_explain_still_sums_to_each_lifted_score(
    rows: list[tuple[list[str], str, str]], words: list[str], limit: int
) -> None:
    """Invariant: a lifted hit's parts, scaled with it, sum to its score."""
    records = [
        turn(f"{folder}/turn-{i:03d}.html", " ".join(text) + ".", at=at)
        for i, (text, folder, at) in enumerate(rows)
    ]
    vectors = {r.content_hash: EMBEDDER.embed([r.claim])[0] for r in records}
    query = " ".join(words)
    extra = {"vectors": vectors, "query_vector": EMBEDDER.embed([query])[0]}
    why: dict[str, dict[str, float]] = {}
    hits = search_head(MapView(records), query, limit=limit, explain=why, **extra)  # type: ignore[arg-type]
    assert hits == search_head(MapView(records), query, limit=limit, **extra)  # type: ignore[arg-type]
    for hit in hits:
        assert set(why[hit.path]) <= set(hit.arms) - {"recency"}
        assert abs(sum(why[hit.path].values()) - hit.score) <= 1e-9 * max(1.0, hit.score)
