"""bench.quality_bench's metric code and LoCoMo reading, on tiny synthetic data written here
(the real data sets never enter the repository)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.quality_bench import (
    Corpus,
    DataSet,
    Query,
    head_ranker,
    holdout,
    holdout_folds,
    load_locomo,
    normalise_evidence,
    prepare,
    rules_cost,
    run_dataset,
)
from bench.support.passages import passages_of, sentence_pairs_of, sentences_of
from bench.support.quality_metrics import metric_names, ndcg_at, query_scores, recall_at, summarize
from headd.embed.hashing import HashingEmbedder
from headd.head.vectors import VersionMatrix


def test_recall_and_ndcg_by_hand() -> None:
    ranked = ["a", "b", "c", "d"]
    assert recall_at(ranked, {"b", "z"}, 1) == 0.0
    assert recall_at(ranked, {"b", "z"}, 2) == 0.5
    assert recall_at(ranked, set(), 10) == 0.0
    assert ndcg_at(ranked, {"a"}, 10) == 1.0
    # one relevant at rank 2 of two relevant: (1/log2 3) / (1 + 1/log2 3)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at(ranked, {"b", "z"}, 10) == pytest.approx(expected)
    assert ndcg_at(ranked, {"d"}, 3) == 0.0


def test_summaries_are_means_per_category_with_counts() -> None:
    names = metric_names((1,))
    assert names == ["R@1", "nDCG@10"]
    rows = [
        query_scores(["a"], {"a"}, names),
        query_scores(["b"], {"a"}, names),
        query_scores(["a"], {"a"}, names),
    ]
    summary = summarize(rows, ["x", "y", "x"], names)
    assert summary["all"] == {"n": 3, "R@1": round(2 / 3, 4), "nDCG@10": round(2 / 3, 4)}
    assert summary["x"]["R@1"] == 1.0 and summary["y"] == {"n": 1, "R@1": 0.0, "nDCG@10": 0.0}
    assert summarize(rows, ["all"] * 3, names) == {"all": summary["all"]}, "no group twice"


def test_malformed_evidence_is_normalised() -> None:
    assert normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "junk"]) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
    ]


def _conversation(tmp_path: Path) -> Path:
    conv = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I went hiking in the Alps."},
        ],
        "session_2_date_time": "9:00 am on 2 June, 2023",
        "session_2": [
            {
                "speaker": "Ana",
                "dia_id": "D2:1",
                "text": "Look at this.",
                "blip_caption": "a photo of a grey cat on a sofa",
            },
        ],
        "qa": [
            {"question": "What is the name of Ana's cat?", "evidence": ["D1:1"], "category": 4},
            {"question": "Where did Ben hike?", "evidence": ["D1:2; D9:9"], "category": 1},
            {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5},
            {"question": "No evidence left", "evidence": ["D7:1"], "category": 2},
        ],
    }
    root = tmp_path / "locomo"
    root.mkdir()
    (root / "conv-1.json").write_text(json.dumps(conv), encoding="utf-8")
    return root


def test_locomo_turns_and_sessions_become_memories_and_queries(tmp_path: Path) -> None:
    turn, session = load_locomo(_conversation(tmp_path))
    (corpus,) = turn.corpora
    assert len(corpus.memories) == 3 and [q.category for q in corpus.queries] == [
        "single-hop",
        "multi-hop",
    ]
    assert corpus.queries[1].relevant == {"areas/conv-1/s01/turn-002.html"}, "D9:9 names no turn"
    photo = corpus.memories["areas/conv-1/s02/turn-001.html"]
    assert "grey cat on a sofa" in photo and "Ana, 9:00 am on 2 June, 2023" in photo
    (sessions,) = session.corpora
    assert set(sessions.memories) == {
        "areas/conv-1/session-01.html",
        "areas/conv-1/session-02.html",
    }
    assert sessions.queries[0].relevant == {"areas/conv-1/session-01.html"}


def test_a_run_ranks_every_system_and_scores_it(tmp_path: Path) -> None:
    turn, _session = load_locomo(_conversation(tmp_path))
    prepared = prepare(turn.corpora[0], HashingEmbedder())
    cat = turn.corpora[0].queries[0]
    assert head_ranker(prepared, "lexical")(cat)[0] == "areas/conv-1/s01/turn-001.html"
    result = run_dataset(
        DataSet(turn.name, turn.corpora, turn.metrics),
        HashingEmbedder(),
        ["lexical", "default", "seed-hybrid", "dense"],
        tmp_path,
    )
    assert set(result["systems"]) == {"lexical", "default", "seed-hybrid", "dense"}
    scores = result["systems"]["lexical"]["scores"]
    assert scores["all"]["n"] == 2 and scores["single-hop"]["R@10"] == 1.0


def test_holdout_scores_each_part_with_constants_picked_on_the_others(tmp_path: Path) -> None:
    """Leave-one-out over conversations: one rotation per conversation, each picking from the
    grid on the others, every query scored exactly once; the shipped constants come back."""
    import headd.head.threads as threads

    root = _conversation(tmp_path)
    second = json.loads((root / "conv-1.json").read_text(encoding="utf-8"))
    (root / "conv-2.json").write_text(json.dumps(second), encoding="utf-8")
    turn, _session = load_locomo(root)
    shipped = threads.THREAD_LIFT
    grid = {("headd.head.threads", "THREAD_LIFT"): (0.0, 0.5)}
    result = holdout(turn, HashingEmbedder(), grid)
    assert shipped == threads.THREAD_LIFT
    assert [r["held_out"] for r in result["rotations"]] == ["conv-1", "conv-2"]
    assert all(
        r["picked"]["headd.head.threads.THREAD_LIFT"] in (0.0, 0.5) for r in result["rotations"]
    )
    assert result["queries"] == 4 == sum(r["queries"] for r in result["rotations"])
    held = result["systems"]["held-out"]["scores"]["all"]
    assert held["n"] == 4 and set(result["systems"]) == {"held-out", "default", "lexical"}


def test_one_corpus_is_held_out_in_two_fixed_halves() -> None:
    memories = {f"resources/d{i}.html": "" for i in range(2)}
    queries = [Query(f"q{i}", "x", "all", {"resources/d0.html"}) for i in range(5)]

    folds = holdout_folds(DataSet("scifact", [Corpus("scifact", memories, queries)], ["R@5"]))
    assert [name for name, _ in folds] == ["even", "odd"]
    fold_of = folds[0][1]
    assert [fold_of[f"q{i}"] for i in range(5)] == ["even", "odd", "even", "odd", "even"]


def test_the_rules_cost_is_measured_over_copies_and_leaves_the_rules_in_place(
    tmp_path: Path,
) -> None:
    import headd.head.search as search

    lift, favour = search.lift_threads, search.favour_times
    turn, _session = load_locomo(_conversation(tmp_path))
    result = rules_cost(turn, HashingEmbedder(), size=10)
    assert result["memories"] == 12 and result["queries"] == 2
    assert 0.0 <= result["rules_cpu_ms_per_query"] <= result["cpu_ms_per_query"]
    assert (search.lift_threads, search.favour_times) == (lift, favour)


def test_passages_start_where_the_one_before_runs_out_of_pieces() -> None:
    one_each = lambda _word: 1  # noqa: E731
    assert passages_of("a b c d e f g", one_each, budget=3) == ["d e f g", "g"]
    assert passages_of("a b", one_each, budget=3) == []
    assert passages_of("long a", lambda w: 5 if w == "long" else 1, budget=3) == ["a"]


def test_sentences_end_before_a_capital_digit_or_bracket_and_one_sentence_is_no_passage() -> None:
    text = "Cells divide. E.g. the first one grows. 3 mice died! (A note.) Is it? yes it is."
    assert sentences_of(text) == [
        "Cells divide.",
        "E.g. the first one grows.",
        "3 mice died!",
        "(A note.)",
        "Is it? yes it is.",
    ]
    assert sentences_of("One sentence only.") == []
    assert sentence_pairs_of("A b. C d. E f.") == ["A b. C d.", "C d. E f."]
    assert sentence_pairs_of("One sentence only.") == []


def test_the_passage_arm_scores_a_memory_by_its_best_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory whose answer lies past its first passage: its best row (the passage holding the
    answer) beats its whole vector, and the ranking over passages puts it first."""
    import bench.quality_bench as quality_bench
    from bench.support.stores import scifact_memory, scifact_path

    filler = " ".join(f"filler{i % 37} word{i % 11}." for i in range(200))
    memories = {
        scifact_path("1"): scifact_memory(
            "1", "A long one", f"{filler} Zebras graze quokka fields."
        ),
        scifact_path("2"): scifact_memory("2", "A short one", "Zebras are striped."),
    }
    query = Query("q1", "zebras graze quokka fields", "all", {scifact_path("1")})
    corpus = Corpus("scifact", memories, [query])
    monkeypatch.setattr(quality_bench, "PASSAGES", "pieces")
    prepared = prepare(corpus, HashingEmbedder())
    passages = prepared.passages
    assert passages is not None and len(passages.rows) > 3
    whole = VersionMatrix.build(prepared.view, prepared.cache)
    vector = prepared.query_vectors["q1"]
    best = {path: cosine for cosine, _key, path in passages.ranked(vector, None, 10)}
    plain = {path: cosine for cosine, _key, path in whole.ranked(vector, None, 10)}
    assert best[scifact_path("1")] > plain[scifact_path("1")] + 0.1
    assert best[scifact_path("2")] == pytest.approx(plain[scifact_path("2")])
    assert head_ranker(prepared, "default")(query)[0] == scifact_path("1")
