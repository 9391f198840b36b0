"""Background threads below the event loop: a per-thread ``nice`` (Linux schedules threads).

Why: the daemon's background embedding keeps both cores busy with onnxruntime calls; at equal
priority the event loop's thread waits its turn behind them and a search's latency grows
several-fold. Run at a lower priority, the background work takes only what the answers leave.
"""

from __future__ import annotations

import os
import threading

#: How much lower than the daemon's own threads the background embedding runs (``nice``).
BACKGROUND_NICENESS = 10


def lower_thread_priority(increment: int = BACKGROUND_NICENESS) -> None:
    """Lower the calling thread's CPU priority by ``increment`` (a thread-pool initializer).

    Best effort: where the call is not allowed or not per-thread, nothing changes.
    """
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + increment)
    except (AttributeError, OSError):
        pass
