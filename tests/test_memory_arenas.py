"""The daemon's threads share a few heap arenas, so survivors of passing jobs pack together."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from headd.memory_trim import limit_heap_arenas

#: Four threads allocate past Python's small-object allocator (so glibc's heap serves them) and
#: hold it at once; then glibc lists its arenas on stderr.
THREADS_THEN_STATS = textwrap.dedent(
    """
    import sys, threading
    from headd.memory_trim import _libc, limit_heap_arenas
    if sys.argv[1] == "limit":
        assert limit_heap_arenas(1, {})
    barrier = threading.Barrier(5)
    def burst():
        kept = [bytearray(2000) for _ in range(2000)]
        barrier.wait()
        barrier.wait()
        assert kept
    threads = [threading.Thread(target=burst) for _ in range(4)]
    for thread in threads:
        thread.start()
    barrier.wait()
    _libc().malloc_stats()
    barrier.wait()
    for thread in threads:
        thread.join()
    """
)


def arenas_used(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", THREADS_THEN_STATS, mode],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return sum(1 for line in done.stderr.splitlines() if line.startswith("Arena "))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas")
def test_limited_arenas_keep_every_thread_on_the_shared_heap() -> None:
    unlimited = arenas_used("free")
    if unlimited == 0:
        pytest.skip("not glibc")
    assert unlimited > 1  # a thread of its own gets an arena of its own
    assert arenas_used("limit") == 1


def test_an_operators_malloc_arena_max_is_left_as_it_is() -> None:
    assert limit_heap_arenas(2, {"MALLOC_ARENA_MAX": "4"}) is False
