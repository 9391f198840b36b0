"""Parsing a whole tree's candidates on several processes, folded in tree order as they arrive.

The parser is pure Python over a C HTML parser and holds the GIL, so a full load of a large store
is parse-bound on one core. This spreads the blobs over a ``spawn`` process pool (spawn, never
fork: the daemon runs threads and an event loop), each worker opening the repository itself and
reading, parsing and tokenizing a contiguous run of the tree. Runs come back in tree order as soon
as each is ready, so ``load_head`` folds one run into its index builder while the workers parse
the next, and the fold is exactly the serial fold. Results cross the process boundary as msgpack;
a run's tokens travel coded against the run's own vocabulary (``lexical.code_tokens``), so the
parent maps each distinct token of a run once instead of tokenizing every record.

Any failure to run the pool (no fork of processes allowed, a worker dying) stops the runs early
and the caller parses the rest inline: a pool is an optimization, never a requirement.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Final

import msgspec
import numpy as np
import pygit2

from headd.head.lexical import CodedTokens, code_tokens, indexed_text, tokenize
from headd.record import MemoryRecord

log = logging.getLogger(__name__)

#: Below this many candidates the pool's start-up (≈0.3 s a worker) costs more than it saves.
PARALLEL_THRESHOLD: Final = 3000
MAX_WORKERS: Final = 4
#: The pool needs this many usable CPUs to pay. While ``load_head`` folded only once every file
#: was parsed, two CPUs bought nothing measurable (and 25-40 % more CPU); now the parent folds
#: each run as it arrives and the workers tokenize, the parent's share of a 10,000-file load is
#: ~0.8 s of CPU against ~4.5 s inline, for ~15 % more CPU in all, so two CPUs pay.
MIN_POOL_CPUS: Final = 2
#: Runs per worker: enough that the parent folds early runs while later ones are parsed.
RUNS_PER_WORKER: Final = 4


class _Skip(msgspec.Struct, frozen=True, array_like=True):
    path: str
    reason: str


class _Run(msgspec.Struct, frozen=True, array_like=True):
    """One run's results: records and skips with their positions, and the active records'
    tokens coded against the run's own vocabulary (``lexical.code_tokens``)."""

    records: list[tuple[int, MemoryRecord]]
    skips: list[tuple[int, _Skip]]
    names: list[str]
    #: int32, native order: every token of every active record, as its position in ``names``.
    codes: bytes
    sizes: list[int]


@dataclass(frozen=True, slots=True)
class ParsedRun:
    """Entries ``start``..``stop`` of the tree, parsed: a record, or ``(path, reason)`` for a
    skip, in tree order; and the active records' coded tokens, in the same order."""

    start: int
    stop: int
    items: list[MemoryRecord | tuple[str, str]]
    tokens: CodedTokens


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Run)


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
    names, codes, sizes = code_tokens(
        tokenize(indexed_text(record)) for _, record in records if not record.archived
    )
    return _ENCODER.encode(_Run(records, skips, names, codes.tobytes(), sizes))


def _run_of(start: int, stop: int, payload: bytes) -> ParsedRun:
    run = _DECODER.decode(payload)
    items: list[MemoryRecord | tuple[str, str] | None] = [None] * (stop - start)
    for index, record in run.records:
        items[index - start] = record
    for index, skip in run.skips:
        items[index - start] = (skip.path, skip.reason)
    if any(item is None for item in items):
        raise ValueError("a parse run left entries out")
    codes = np.frombuffer(run.codes, dtype=np.int32)
    return ParsedRun(start, stop, items, (run.names, codes, run.sizes))  # type: ignore[arg-type]


def parse_runs(
    repo_path: str, entries: list[tuple[str, pygit2.Oid]], workers: int
) -> Iterator[ParsedRun]:
    """The entries parsed on ``workers`` processes, as contiguous runs yielded in tree order as
    soon as each is ready, so the caller folds one run while the pool parses the next.

    When the pool fails (cannot start, a worker dies) the runs stop early with a warning; the
    caller parses the entries from the last run's ``stop`` inline.
    """
    runs = max(workers * RUNS_PER_WORKER, 1)
    size = -(-len(entries) // runs)
    bounds = [(start, min(start + size, len(entries))) for start in range(0, len(entries), size)]
    jobs = [
        (repo_path, start, [(path, str(oid)) for path, oid in entries[start:stop]])
        for start, stop in bounds
    ]
    pool: ProcessPoolExecutor | None = None
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
        for (start, stop), payload in zip(bounds, pool.map(_parse_run, jobs), strict=True):
            yield _run_of(start, stop, payload)
    except Exception:  # the pool is an optimization: any failure means "parse inline"
        log.warning("parallel parse unavailable; parsing inline", exc_info=True)
    finally:
        if pool is not None:
            # Runs not started yet are dropped when the caller stops early or the pool failed.
            pool.shutdown(wait=True, cancel_futures=True)
