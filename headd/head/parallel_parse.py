"""Parsing a whole tree's candidates on several processes, in tree order.

The parser is pure Python over a C HTML parser and holds the GIL, so a full load of a large store
is parse-bound on one core. This spreads the blobs over a ``spawn`` process pool (spawn, never
fork: the daemon runs threads and an event loop), each worker opening the repository itself and
reading and parsing a contiguous run of the tree, and returns the results in tree order so the
fold in ``load_head`` is exactly the serial fold. Results cross the process boundary as msgpack.

Any failure to run the pool (no fork of processes allowed, a worker dying) makes the caller fall
back to the serial path: a pool is an optimization, never a requirement.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Final

import msgspec
import pygit2

from headd.record import MemoryRecord

log = logging.getLogger(__name__)

#: Below this many candidates the pool's start-up (≈0.3 s a worker) costs more than it saves.
PARALLEL_THRESHOLD: Final = 3000
MAX_WORKERS: Final = 4
#: The pool needs this many usable CPUs to pay. ``load_head`` folds only once every file is
#: parsed, so the pool shortens the parse alone, and pays for it with the workers' start-up and
#: a msgpack round trip of every record; on two CPUs that bought nothing measurable for 10,000
#: files (the serial parse is ~0.25 ms a file) while using 25–40 % more CPU in all.
MIN_POOL_CPUS: Final = 3


class _Skip(msgspec.Struct, frozen=True, array_like=True):
    path: str
    reason: str


_Chunk = tuple[list[tuple[int, MemoryRecord]], list[tuple[int, _Skip]]]
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(tuple[list[tuple[int, MemoryRecord]], list[tuple[int, _Skip]]])


def _usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, which a container or systemd narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not every platform has affinity masks
        return os.cpu_count() or 1


def default_workers(candidates: int) -> int:
    """How many processes a load of ``candidates`` files should use (1: parse inline)."""
    if candidates < PARALLEL_THRESHOLD:
        return 1
    cpus = _usable_cpus()
    if cpus < MIN_POOL_CPUS:
        return 1
    return min(MAX_WORKERS, cpus)


def _parse_run(job: tuple[str, int, list[tuple[str, str]]]) -> bytes:
    from headd.head.version import SkippedFile, _read_and_parse

    repo_path, offset, items = job
    repo = pygit2.Repository(repo_path)
    records: list[tuple[int, MemoryRecord]] = []
    skips: list[tuple[int, _Skip]] = []
    for index, (path, hex_id) in enumerate(items, start=offset):
        parsed = _read_and_parse(repo, path, pygit2.Oid(hex=hex_id))
        if isinstance(parsed, SkippedFile):
            skips.append((index, _Skip(parsed.path, parsed.reason)))
        else:
            records.append((index, parsed))
    return _ENCODER.encode((records, skips))


def parse_in_pool(
    repo_path: str, entries: list[tuple[str, pygit2.Oid]], workers: int
) -> list[MemoryRecord | tuple[str, str]] | None:
    """Every entry parsed, in order: a record, or ``(path, reason)`` for a skip. None when the
    pool could not run (the caller then parses inline)."""
    runs = max(workers * 4, 1)
    size = -(-len(entries) // runs)
    jobs = [
        (repo_path, start, [(path, str(oid)) for path, oid in entries[start : start + size]])
        for start in range(0, len(entries), size)
    ]
    out: list[MemoryRecord | tuple[str, str] | None] = [None] * len(entries)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            for payload in pool.map(_parse_run, jobs):
                records, skips = _DECODER.decode(payload)
                for index, record in records:
                    out[index] = record
                for index, skip in skips:
                    out[index] = (skip.path, skip.reason)
    except Exception:  # the pool is an optimization: any failure means "parse inline"
        log.warning("parallel parse unavailable; parsing inline", exc_info=True)
        return None
    if any(item is None for item in out):
        return None
    return out  # type: ignore[return-value]
