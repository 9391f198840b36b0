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
