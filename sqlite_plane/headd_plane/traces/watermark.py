"""The incremental-scan decision for one transcript file: pure arithmetic over its stat.

A watermark is what the last scan recorded: ``size`` and ``mtime_ms`` (whole milliseconds, the
resolution of the ISO text the table stores, so an unchanged file compares equal after a round
trip) from the stat taken *before* that read, and ``byte_off``, one past the last byte consumed
(always a line boundary).

- **skip** when size and mtime are both unchanged: the file is not even opened.
- **rescan** from 0 when there is no watermark, the file shrank, its mtime went backwards, the
  offset lies past the end, or the size is the same but the mtime moved (rewritten in place).
- **tail** from ``byte_off`` otherwise (it grew by appending).
"""

from __future__ import annotations

from typing import Literal

import msgspec

Action = Literal["skip", "tail", "rescan"]


class Watermark(msgspec.Struct, frozen=True):
    size: int
    mtime_ms: int
    byte_off: int


class Plan(msgspec.Struct, frozen=True):
    action: Action
    start: int


def plan_read(prev: Watermark | None, size: int, mtime_ms: int) -> Plan:
    """How to read a file whose stat is ``(size, mtime_ms)`` given the previous watermark."""
    if prev is None:
        return Plan("rescan", 0)
    if size == prev.size and mtime_ms == prev.mtime_ms:
        return Plan("skip", prev.byte_off)
    if size < prev.size or mtime_ms < prev.mtime_ms or prev.byte_off > size or size == prev.size:
        return Plan("rescan", 0)
    return Plan("tail", prev.byte_off)


def advance(size: int, mtime_ms: int, start: int, consumed: int) -> Watermark:
    """The watermark after a read of ``consumed`` bytes from ``start`` (stat taken before it)."""
    return Watermark(size=size, mtime_ms=mtime_ms, byte_off=min(start + consumed, size))
