"""Many client threads released together, timed from the release to the last one's end.

``timed_threads(count, work)`` runs ``work(i, barrier)`` in ``count`` threads: each does its
setup (a connection, a session), waits on ``barrier``, then does the measured work. The wall
clock starts when every thread is past the barrier, so setup is never counted. A thread that
fails breaks the barrier, so the others and the caller stop waiting, and its error is raised.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable


def timed_threads(count: int, work: Callable[[int, threading.Barrier], None]) -> float:
    """Seconds from the barrier's release to the last thread's end; the first error re-raised."""
    barrier = threading.Barrier(count + 1)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(i, barrier)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller after the join
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a thread failed: join, then raise
        barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise errors[0]
    return wall
