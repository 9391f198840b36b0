"""``status.memory``'s per-version figures: what they count, that asking builds nothing."""

from __future__ import annotations

from pathlib import Path

from support.head_corpus import make_corpus, memory_for

from headd.head import snapshot as snap
from headd.head.footprint import process_memory, version_footprint
from headd.head.version import load_head


def test_the_figures_count_every_record_and_bucket(tmp_path: Path) -> None:
    repo, sha, _files = make_corpus(tmp_path / "store", 15)
    version = load_head(repo.repo, sha, workers=1)
    figures = version_footprint(version.indexes)
    assert figures is not None
    counted, postings = figures
    records = list(version.indexes.records.values())
    assert counted.count == len(records) == 15
    # The disclosure text counts where it is more than the claim (else it is the claim itself);
    # the body as the deflated bytes it is held in.
    assert counted.text_chars == sum(
        len(r.claim) + len(r.title) + len(r.disclosure or "") for r in records
    )
    assert counted.body_deflated_bytes == sum(len(r.body_deflated) for r in records)
    assert 0 < counted.body_deflated_bytes < sum(len(r.body_text) for r in records)
    buckets = list(version.indexes.lexical.postings.values())
    assert postings.buckets == len(buckets)
    assert postings.entries == sum(len(b) for b in buckets)
    assert version_footprint(version.indexes) is figures  # kept beside the version


def test_a_token_named_like_an_attribute_does_not_hide_the_figures(tmp_path: Path) -> None:
    repo, _sha, _files = make_corpus(tmp_path / "store", 3)
    memory = memory_for(90)
    tip = repo.commit([(memory.path, memory.html.replace(" grows ", " pending grows ", 1))], "x")
    version = load_head(repo.repo, tip, workers=1)
    assert "pending" in version.indexes.lexical.postings
    assert version_footprint(version.indexes) is not None


def test_a_decoded_version_is_not_built_by_asking(tmp_path: Path) -> None:
    repo, sha, _files = make_corpus(tmp_path / "store", 8)
    decoded = snap.decode_version(snap.encode_version(load_head(repo.repo, sha, workers=1)))
    assert version_footprint(decoded.indexes) is None
    assert decoded.indexes.records.pending  # type: ignore[attr-defined]
    snap.settle_version(decoded)
    figures = version_footprint(decoded.indexes)
    assert figures is not None and figures[0].count == 8


def test_the_process_figures_are_read_from_proc() -> None:
    memory = process_memory()
    assert memory["rss_bytes"] is not None and memory["rss_bytes"] > 10 * 1024 * 1024
    assert memory["peak_bytes"] is not None and memory["peak_bytes"] >= memory["rss_bytes"]


def test_releasing_free_memory_lowers_the_resident_size_after_a_burst() -> None:
    from headd.memory_trim import release_free_memory

    def rss() -> int:
        value = process_memory()["rss_bytes"]
        assert value is not None
        return value

    release_free_memory()
    # ~60 MB of blocks past Python's small-object allocator (so glibc's heap holds them), then
    # freed but for a few survivors, which keep free() alone from giving the heap back.
    burst = [bytearray(4000) for _ in range(15_000)]
    burst = burst[::64]
    high = rss()
    assert release_free_memory()
    assert rss() < high - 20 * 1024 * 1024
    assert burst


def test_array_bytes_counts_every_copy_a_vector_cache_holds_and_a_view_once() -> None:
    import numpy as np

    from headd.head.footprint import array_bytes
    from headd.head.vectors import VectorCache, VectorSpace

    space = VectorSpace.parse("model@4")
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    cache = VectorCache(space, {"a": 0, "b": 1, "c": 2}, matrix)
    # one copy of the vectors: their unit rows (3 x 4 float16) and one float32 scale each
    assert array_bytes(cache) == 3 * 4 * 2 + 3 * 4
    assert array_bytes(cache, None, cache) == array_bytes(cache)

    class Views:
        __slots__ = ("whole", "half")

        def __init__(self, whole: np.ndarray) -> None:
            self.whole, self.half = whole, whole[:2]

    assert array_bytes(Views(np.zeros(8, dtype=np.float64))) == 64
