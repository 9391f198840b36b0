"""How many cores this process may use: its CPU affinity, which a container or a systemd unit
narrows, rather than the machine's count, so a daemon limited to one core never plans for two."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the platform has one), at
    least one."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)
