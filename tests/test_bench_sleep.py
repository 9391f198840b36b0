"""bench/sleep_bench on a small store: the document's shape, and that its corpus gives every
deterministic phase something to do (so the timing measures the phases, not an empty pass)."""

from __future__ import annotations

from bench import sleep_bench


def test_the_bench_measures_a_run_that_changes_something() -> None:
    figure = sleep_bench.measure(200)
    assert figure["memories"] == 200
    assert figure["run"]["wall_s"] > 0 and figure["search_idle"]["n"] == 200
    assert set(figure["phases"]) >= {
        "dedup-merge",
        "retention-triage",
        "reprieve",
        "placement-triage",
    }
    assert figure["search_ratio_p50"] is not None


def test_the_peer_corpus_has_one_file_per_content_hash() -> None:
    """memhtml's index refuses two files with one content hash, so the peer's store has none;
    the bench's own store keeps its exact duplicates for dedup-merge."""
    from headd.store.ports import parse_memory

    def hashes(files: dict[str, str]) -> list[str]:
        return [parse_memory(path, html).content_hash for path, html in files.items()]

    peer = hashes(sleep_bench.corpus(300, duplicates=False))
    assert len(set(peer)) == len(peer)
    ours = hashes(sleep_bench.corpus(300))
    assert len(set(ours)) < len(ours)
