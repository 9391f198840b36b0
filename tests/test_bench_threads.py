"""The benches' thread harness: setup is not timed, and a failing thread stops the run with its
error instead of leaving the others (and the caller) waiting on the barrier."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.support.threads import timed_threads  # noqa: E402


def test_every_thread_runs_past_the_barrier() -> None:
    done: list[int] = []

    def work(i: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        done.append(i)

    assert timed_threads(4, work) >= 0.0
    assert sorted(done) == [0, 1, 2, 3]


def test_a_thread_failing_before_the_barrier_raises_its_error() -> None:
    outcome: list[BaseException] = []

    def work(i: int, barrier: threading.Barrier) -> None:
        if i == 2:
            raise ConnectionRefusedError("no daemon")
        barrier.wait()

    def run() -> None:
        try:
            timed_threads(4, work)
        except BaseException as exc:  # noqa: BLE001 - inspected below
            outcome.append(exc)

    caller = threading.Thread(target=run, daemon=True)
    caller.start()
    caller.join(timeout=30)
    assert not caller.is_alive(), "the caller is still waiting on the barrier"
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionRefusedError)


def test_a_thread_failing_after_the_barrier_raises_its_error() -> None:
    def work(i: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        if i == 0:
            raise ValueError("bad answer")

    with pytest.raises(ValueError, match="bad answer"):
        timed_threads(3, work)
