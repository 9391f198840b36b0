"""Give freed heap back to the operating system after the daemon's few large, passing jobs.

A snapshot write, the SQLite plane's update and the build of a decoded version's maps each
allocate and free tens of megabytes on their own threads. glibc keeps what a thread freed in
that thread's arena, so the resident size stays at the job's peak long after the job; its
``malloc_trim(0)`` returns the free pages of every arena. A no-op where there is no glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


def release_free_memory() -> bool:
    """Return free heap pages to the system; whether anything was returned."""
    trim = _malloc_trim()
    if trim is None:
        return False
    return bool(trim(0))
