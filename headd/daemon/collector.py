"""The cyclic collector and the daemon's long-lived versions.

A version's persistent maps are pyrsistent vectors whose traversal visits every slot: at 10,000
memories the token map's vector has ~110,000, and an advance or a session overlay makes new
ones. While they sit in the collector's young generations, every young collection walks them
again, and those passes would be most of a session commit's CPU and all of its tail (the commit
must stay within 50 ms at 10,000 memories; docs/design.md gives the measurement). Versions hold no
cycles (records, maps and arrays are acyclic, the follower cuts parent pointers), so the
collector has nothing to find in them: the daemon moves everything alive into the permanent
generation (``gc.freeze``, O(1)) as soon as a new version exists. Reference counting still frees
a dropped version.

The price: cyclic garbage made before a freeze is never collected by the young passes. The
sources we know are gone (a ``pygit2.Repository`` is a cycle, so the store opens one per thread
and reuses it; see ``tests/test_store_no_cycles.py``); what is left (asyncio's per-connection
objects, exception tracebacks) is small, and a full sweep (unfreeze, collect, freeze) runs when
the daemon has been quiet a while, at most every ``sweep_every_s``.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class VersionCollector:
    """Freeze after each new version; sweep everything now and then, when no advance is near."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sweep_every_s: float = 600.0,
        quiet_s: float = 30.0,
    ) -> None:
        self._clock = clock
        self.sweep_every_s = sweep_every_s
        self.quiet_s = quiet_s
        self._last_version = clock()
        self._last_sweep = self._last_version
        self._frozen_since_sweep = False
        self.sweeps = 0

    def settled(self) -> None:
        """A new version is in place: move every live object out of the young generations."""
        gc.freeze()
        self._frozen_since_sweep = True
        self._last_version = self._clock()

    def maybe_sweep(self) -> bool:
        """A full collection of everything, if freezes happened and the daemon has been quiet."""
        now = self._clock()
        if not self._frozen_since_sweep:
            return False
        if now - self._last_version < self.quiet_s or now - self._last_sweep < self.sweep_every_s:
            return False
        started = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self._last_sweep = self._clock()
        self._frozen_since_sweep = False
        self.sweeps += 1
        log.info(
            "collector sweep: %d unreachable objects freed in %.0f ms",
            found,
            (time.perf_counter() - started) * 1000.0,
        )
        return True
