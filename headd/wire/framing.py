"""Framing: newline-delimited messages with a per-line byte limit, kept apart from JSON-RPC.

The framer is sans-I/O: it is fed whatever bytes a read returned and hands back whole lines, so
the same code serves the daemon's read loop and the tests (which split input at random points and
expect the same lines). A line longer than the limit is reported once as ``Oversized`` and the
framer then refuses further input: the contract answers it with an error and closes the
connection, because after an overrun nothing says where the next message starts.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_LINE_LIMIT = 8 * 1024 * 1024
"""8 MiB, the contract's default line limit (contract section 2)."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line that grew past the limit before its newline arrived."""

    limit: int


class LineFramer:
    """Split a byte stream into lines terminated by ``\\n`` (the newline is not part of a line).

    ``feed`` returns the complete lines the new bytes finish, in order. A trailing ``\\r`` is kept
    (JSON parsing tolerates it as whitespace). Once a line overruns the limit the framer yields a
    single ``Oversized`` and is closed for good.
    """

    __slots__ = ("_buffer", "_closed", "_limit", "_scan_from")

    def __init__(self, limit: int = DEFAULT_LINE_LIMIT) -> None:
        if limit < 1:
            raise ValueError("line limit must be positive")
        self._limit = limit
        self._buffer = bytearray()
        self._scan_from = 0
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pending(self) -> int:
        """Bytes held that do not yet end in a newline."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        if self._closed:
            return []
        out: list[bytes | Oversized] = []
        self._buffer += data
        start = 0
        scan = self._scan_from
        while True:
            newline = self._buffer.find(b"\n", scan)
            if newline < 0:
                break
            if newline - start > self._limit:
                return self._overrun(out)
            out.append(bytes(self._buffer[start:newline]))
            start = newline + 1
            scan = start
        if start:
            del self._buffer[:start]
        self._scan_from = len(self._buffer)
        if len(self._buffer) > self._limit:
            return self._overrun(out)
        return out

    def _overrun(self, out: list[bytes | Oversized]) -> list[bytes | Oversized]:
        self._closed = True
        self._buffer = bytearray()
        out.append(Oversized(self._limit))
        return out


def frame(payload: bytes) -> bytes:
    """One message on the wire: the payload and its newline (payloads never embed one)."""
    return payload + b"\n"
