"""Give freed heap back to the operating system after the daemon's few large, passing jobs.

A snapshot write, the SQLite plane's update and the build of a decoded version's maps each
allocate and free tens of megabytes on their own threads. glibc keeps what a thread freed in
that thread's arena, so the resident size stays at the job's peak long after the job; its
``malloc_trim(0)`` returns the free pages of every arena. What trimming cannot return is a page
that still holds one live block, and with an arena per thread (up to eight per core) the git
load, the plane's update, the snapshot write and the embedder each leave their survivors spread
over arenas of their own, and glibc raises its threshold for serving a block by ``mmap`` to the
largest block freed, so a passing job's multi-megabyte buffers end up inside the arenas too:
:func:`limit_heap_arenas` keeps every thread on a few shared arenas and large blocks on ``mmap``,
which returns them whole when they are freed. All are no-ops where there is no glibc.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


#: glibc's ``mallopt`` parameters (malloc.h's ``M_ARENA_MAX``, ``M_MMAP_THRESHOLD``).
M_ARENA_MAX = -8
M_MMAP_THRESHOLD = -3
#: glibc's initial threshold; set explicitly, it no longer grows with the blocks freed.
MMAP_THRESHOLD_BYTES = 128 * 1024
#: glibc's own settings, read at start-up; an operator's value there wins over ours.
ARENA_ENV_VAR = "MALLOC_ARENA_MAX"
MMAP_ENV_VAR = "MALLOC_MMAP_THRESHOLD_"


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library the process runs on, when it is glibc (the process's own symbols: no
    ``find_library``, which runs ``ldconfig`` in a subprocess, on the way to READY)."""
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim  # noqa: B018 (glibc's, absent from other C libraries)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def limit_heap_arenas(arenas: int, environ: Mapping[str, str] = os.environ) -> bool:
    """Let all threads share at most ``arenas`` heap arenas, and serve blocks of 128 KiB and
    more by ``mmap`` for good; whether the arena limit was set.

    Call it before the threads start. Either setting is left alone when its glibc variable
    (``MALLOC_ARENA_MAX``, ``MALLOC_MMAP_THRESHOLD_``) is set, which glibc has applied already.
    """
    libc = _libc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    if not environ.get(MMAP_ENV_VAR, "").strip():
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    if environ.get(ARENA_ENV_VAR, "").strip():
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    libc = _libc()
    if libc is None:  # not glibc
        return None
    function = libc.malloc_trim
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


def release_free_memory() -> bool:
    """Return free heap pages to the system; whether anything was returned."""
    trim = _malloc_trim()
    if trim is None:
        return False
    return bool(trim(0))
