"""VersionCollector: freeze after each new version, sweep only when quiet (injected clock)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from headd.daemon.collector import VersionCollector


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settled_moves_live_objects_out_of_the_young_generations() -> None:
    gc.unfreeze()
    keep = [Cycle() for _ in range(10)]
    VersionCollector().settled()
    assert gc.get_freeze_count() > 0
    assert all(not any(o is k for o in gc.get_objects(g) for k in keep) for g in range(3))
    del keep


def test_a_sweep_waits_for_quiet_and_for_its_interval_then_frees_frozen_cycles() -> None:
    clock = Clock()
    collector = VersionCollector(clock=clock, sweep_every_s=600.0, quiet_s=30.0)
    assert not collector.maybe_sweep()  # nothing frozen yet
    Cycle()  # garbage from before the freeze: frozen with everything else
    collector.settled()
    clock.now += 20.0
    assert not collector.maybe_sweep()  # a version 20 s ago: not quiet
    clock.now += 20.0
    assert not collector.maybe_sweep()  # quiet, but the last sweep (start) is 40 s ago
    clock.now += 600.0
    frozen = gc.get_freeze_count()
    assert collector.maybe_sweep()
    assert collector.sweeps == 1
    assert gc.get_freeze_count() < frozen  # the frozen cycle was collected
    assert not collector.maybe_sweep()  # nothing frozen since the sweep
