"""Background threads below the event loop: a per-thread ``nice`` (Linux schedules threads).

Why: the daemon's background embedding keeps both cores busy with onnxruntime calls; at equal
priority the event loop's thread waits its turn behind them and a search's latency grows
several-fold. Run at a lower priority, the background work takes only what the answers leave.

Only Linux gives each thread its own nice value, set through ``setpriority(PRIO_PROCESS, tid)``
with the thread's native id. Elsewhere that call names a *process* by that number (on macOS
and the BSDs a thread id is no process id), so it would renice the wrong process or none: on
any other platform the call is not made.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

#: How much lower than the daemon's own threads the background embedding runs (``nice``).
BACKGROUND_NICENESS = 10


def lower_thread_priority(increment: int = BACKGROUND_NICENESS) -> None:
    """Lower the calling thread's CPU priority by ``increment`` (a thread-pool initializer).

    Best effort: off Linux, or where the call is not allowed, nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + increment)
    except (AttributeError, OSError):
        pass


def run_at_background_priority(fn: Callable[[], T]) -> T:
    """``fn()`` run on a new thread at the background priority (the main thread's nice plus
    :data:`BACKGROUND_NICENESS`), its result or its exception handed back to the caller.

    Why: a new thread inherits its creator's nice value, so the threads ``fn`` starts run at
    that priority for their whole life, whichever thread called this. The embedder builds its
    onnxruntime session here, so the session's intra-op worker serves the background fill below
    the event loop however the model came to be loaded (a query, the warm-up, a test).
    """
    with ThreadPoolExecutor(
        1, thread_name_prefix="headd-background-start", initializer=_lower_to_background
    ) as starter:
        return starter.submit(fn).result()


def _lower_to_background() -> None:
    """Set the calling thread's nice to the main thread's plus :data:`BACKGROUND_NICENESS` when it
    is below that (a nice value only ever rises here, which needs no privilege)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + BACKGROUND_NICENESS)
        if os.getpriority(os.PRIO_PROCESS, tid) < target:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except (AttributeError, OSError):
        pass
