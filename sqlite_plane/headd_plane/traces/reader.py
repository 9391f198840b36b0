"""Read a transcript's complete lines from a byte offset and fold them.

Only lines ending in ``\\n`` are consumed, so a line still being written is left for the next
scan and the returned offset always lands on a record boundary. The read stops at the size the
caller's stat saw, so bytes appended during the scan are left for the next one too, rather than
being half-counted against a watermark that records the older size. ``\\n`` never occurs inside
a UTF-8 multi-byte sequence, so splitting raw bytes is safe; a trailing ``\\r`` is JSON whitespace.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from headd_plane.traces.extract import FileExtract, Folder

CHUNK_BYTES = 4 << 20


class ReadResult(msgspec.Struct, frozen=True):
    extract: FileExtract
    consumed: int


def read_from(path: Path | str, start: int, limit: int) -> ReadResult:
    """Fold the complete lines in ``[start, limit)``; raises OSError if the file is gone."""
    folder = Folder()
    consumed = 0
    remaining = max(0, limit - start)
    pending = b""
    with open(path, "rb") as fh:
        fh.seek(start)
        while remaining > 0:
            chunk = fh.read(min(CHUNK_BYTES, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            buf = pending + chunk if pending else chunk
            lines = buf.split(b"\n")
            pending = lines.pop()
            for line in lines:
                folder.line(line)
            consumed += len(buf) - len(pending)
    return ReadResult(extract=folder.finish(), consumed=consumed)
