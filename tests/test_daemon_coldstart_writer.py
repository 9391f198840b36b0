"""The background snapshot writer: coalesced, rate-limited, never on the event loop, never fatal."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path

from headd.daemon.snapshot_store import SnapshotStore
from headd.daemon.snapshots import SnapshotWriter


@dataclass(frozen=True)
class FakeVersion:
    sha: str


class Encoder:
    """Stands in for ``encode_version`` (the bytes are not decoded here) and records threads."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.threads: set[str] = set()
        self.delay = delay
        self.fail = fail

    def __call__(self, version: FakeVersion) -> bytes:
        self.calls.append(version.sha)
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise OSError("disk full")
        if self.delay:
            threading.Event().wait(self.delay)
        return version.sha.encode()


def sha(n: int) -> str:
    return f"{n:040x}"


def test_a_burst_of_versions_costs_one_write_of_the_latest(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    encode = Encoder(delay=0.05)

    async def scenario() -> None:
        writer = SnapshotWriter(store, encode, interval=0.3)
        writer.schedule(FakeVersion(sha(1)))
        await asyncio.sleep(0.01)  # the first write is under way
        for n in range(2, 12):
            writer.schedule(FakeVersion(sha(n)))
        ticks = 0
        while writer.writing:  # the loop keeps running while the thread writes
            ticks += 1
            await asyncio.sleep(0.005)
        assert ticks > 5
        writer.shutdown()

    asyncio.run(scenario())
    assert encode.calls == [sha(1), sha(11)]
    assert all(name.startswith("headd-snapshot") for name in encode.threads)
    assert [e.sha for e in store.entries()][0] == sha(11)


def test_writes_are_spaced_by_the_interval(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    encode = Encoder()
    clock = [100.0]

    async def scenario() -> None:
        writer = SnapshotWriter(store, encode, interval=60.0, clock=lambda: clock[0])
        writer.schedule(FakeVersion(sha(1)))
        await writer.wait_idle()
        writer.schedule(FakeVersion(sha(2)))
        await asyncio.sleep(0.05)
        assert encode.calls == [sha(1)] and writer.writing  # waiting out the interval
        writer.stop()
        writer.shutdown()

    asyncio.run(scenario())
    # The stop came inside the interval: shutdown writes the newest version once, so the next
    # start decodes the tip's own snapshot.
    assert encode.calls == [sha(1), sha(2)]
    assert store.has(sha(2))


def test_the_snapshot_the_cold_start_used_is_not_rewritten_but_others_are(
    tmp_path: Path,
) -> None:
    store = SnapshotStore(tmp_path, keep=3)
    store.write(sha(1), b"good")
    store.write(sha(2), b"refused at the cold start")
    encode = Encoder()

    async def scenario() -> None:
        writer = SnapshotWriter(store, encode, interval=0.0)
        writer.loaded_from(sha(1))
        writer.schedule(FakeVersion(sha(1)))
        await writer.wait_idle()
        writer.schedule(FakeVersion(sha(2)))
        await writer.wait_idle()
        writer.shutdown()

    asyncio.run(scenario())
    assert encode.calls == [sha(2)]
    assert store.read(sha(1)) == b"good"
    assert store.read(sha(2)) == sha(2).encode()


def test_a_failed_write_is_kept_for_status_and_the_next_one_retries(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    encode = Encoder(fail=True)

    async def scenario() -> None:
        writer = SnapshotWriter(store, encode, interval=0.0)
        writer.schedule(FakeVersion(sha(1)))
        await writer.wait_idle()
        assert writer.status().last_error == "OSError"
        encode.fail = False
        writer.schedule(FakeVersion(sha(2)))
        await writer.wait_idle()
        status = writer.status()
        assert status.last_error is None and status.writes == 1
        assert status.last_sha == sha(2) and status.last_bytes == 40
        writer.shutdown()

    asyncio.run(scenario())
    assert store.has(sha(2)) and not store.has(sha(1))
