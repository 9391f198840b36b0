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


#: Frees a 4 MiB block (which raises glibc's own mmap threshold to 4 MiB), then holds a 1 MiB one
#: and prints how many blocks glibc serves by mmap (``mallinfo2().hblks``).
BIG_BLOCK_AFTER_A_BIGGER_ONE = textwrap.dedent(
    """
    import ctypes, sys
    from headd.memory_trim import _libc, limit_heap_arenas
    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
            "fordblks", "keepcost")]
    libc = _libc()
    libc.mallinfo2.restype = MallInfo2
    if sys.argv[1] == "limit":
        limit_heap_arenas(2, {})
    before = libc.mallinfo2().hblks
    big = bytearray(4 << 20)
    del big
    held = bytearray(1 << 20)
    print(libc.mallinfo2().hblks - before)
    """
)


def mmapped_blocks_held(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", BIG_BLOCK_AFTER_A_BIGGER_ONE, mode],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_large_blocks_stay_on_mmap_after_a_larger_one_was_freed() -> None:
    try:
        unlimited = mmapped_blocks_held("free")
    except subprocess.CalledProcessError:
        pytest.skip("no glibc 2.33 mallinfo2")
    assert unlimited == 0  # glibc's own threshold rose to 4 MiB: the 1 MiB block is in the heap
    assert mmapped_blocks_held("limit") == 1  # returned whole when it is freed
