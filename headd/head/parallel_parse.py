"""Parsing a whole tree's candidates on several processes, folded in tree order as they arrive.

The parser is pure Python over a C HTML parser and holds the GIL, so a full load of a large store
is parse-bound on one core. This spreads the blobs over worker processes (``parse_worker.py``),
each opening the repository itself and reading, parsing and tokenizing contiguous runs of the
tree, a faster worker taking more runs. Runs come back in tree order as soon as each is ready, so
``load_head`` folds one run into its index builder while the workers parse the next, and the fold
is exactly the serial fold. Results cross the process boundary as msgpack; a run's tokens travel
coded against the run's own vocabulary, so the parent maps each distinct token of a run once
instead of tokenizing every record.

The workers are plain subprocesses (``sys.executable -m headd.head.parse_worker``), not a
``multiprocessing`` pool: a spawned pool worker re-imports the parent's ``__main__`` and this
module's numpy and index imports before its first parse, about three times what a worker that
imports the parser and pygit2 only costs to start. Subprocesses are started by fork and exec, never a
bare fork: the daemon runs threads and an event loop.

Any failure to run the workers (no processes allowed, a worker dying) stops the runs early and
the caller parses the rest inline: a pool is an optimization, never a requirement.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

import msgspec

from headd.lazy_import import LazyModule

if TYPE_CHECKING:
    import numpy as np
else:  # imported at first use: a cold start or a rebuild may never need it (lazy_import)
    np = LazyModule("numpy", globals(), "np")
import pygit2

from headd.cores import usable_cores
from headd.head import parse_worker
from headd.head.lexical import CodedTokens
from headd.record import MemoryRecord

log = logging.getLogger(__name__)

#: Below this many candidates the workers' start-up costs more than it saves.
PARALLEL_THRESHOLD: Final = 3000
MAX_WORKERS: Final = 4
#: The pool needs this many usable CPUs to pay. The parent folds each run as it arrives and the
#: workers tokenize, so the parent's share of a load is a fifth of an inline load's CPU for a
#: little more CPU in all: two CPUs pay (docs/design/head.md, "Parallel load").
MIN_POOL_CPUS: Final = 2
#: Runs per worker: enough that the parent folds early runs while later ones are parsed, and
#: small enough that the workers end close together (a worker takes the next run when it is free,
#: so they end at most one run apart; 8 a worker halves that gap against 4).
RUNS_PER_WORKER: Final = 8


@dataclass(frozen=True, slots=True)
class ParsedRun:
    """Entries ``start``..``stop`` of the tree, parsed: a record, or ``(path, reason)`` for a
    skip, in tree order; and the active records' coded tokens, in the same order."""

    start: int
    stop: int
    items: list[MemoryRecord | tuple[str, str]]
    tokens: CodedTokens


_DECODER = msgspec.msgpack.Decoder(parse_worker.Run)


def default_workers(candidates: int) -> int:
    """How many processes a load of ``candidates`` files should use (1: parse inline)."""
    if candidates < PARALLEL_THRESHOLD:
        return 1
    cpus = usable_cores()
    if cpus < MIN_POOL_CPUS:
        return 1
    return min(MAX_WORKERS, cpus)


def _run_of(start: int, stop: int, payload: bytes) -> ParsedRun:
    run = _DECODER.decode(payload)
    items: list[MemoryRecord | tuple[str, str] | None] = [None] * (stop - start)
    for index, record in run.records:
        items[index - start] = record
    for index, skip in run.skips:
        items[index - start] = (skip.path, skip.reason)
    if any(item is None for item in items):
        raise ValueError("a parse run left entries out")
    if not run.sizes:  # no tokens (asked for none, or nothing active): numpy not needed
        return ParsedRun(start, stop, items, _NO_TOKENS)  # type: ignore[arg-type]
    codes = np.frombuffer(run.codes, dtype=np.int32)
    return ParsedRun(start, stop, items, (run.names, codes, run.sizes))  # type: ignore[arg-type]


#: A run without tokens: the codes are an empty buffer, which every reader of codes handles.
_NO_TOKENS: tuple[list[str], memoryview, list[int]] = ([], memoryview(b"").cast("i"), [])


class WorkerFailed(RuntimeError):
    """A worker reported a failure, or ended without sending every run it took."""


def _worker_command() -> tuple[list[str], dict[str, str]]:
    """The worker's command line, and an environment that finds this ``headd`` first."""
    if not sys.executable:
        raise WorkerFailed("no Python executable to start a worker with")
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return [sys.executable, "-m", "headd.head.parse_worker"], env


class _Pool:
    """The worker processes of one :func:`parse_runs` and the runs they have sent back.

    One thread per worker writes the worker its job and then reads its results into
    ``_results``; the caller's thread takes them in tree order with :meth:`take`. Reading on
    threads means a worker never waits on a full pipe while the caller folds another run.
    """

    def __init__(self, job: parse_worker.Job, workers: int) -> None:
        runs = len(job.runs)
        if runs > 256:
            raise ValueError("a claim is one byte: at most 256 runs")
        self._results: dict[int, bytes] = {}
        self._failure: BaseException | None = None
        self._running = workers
        self._changed = threading.Condition()
        self._procs: list[subprocess.Popen[bytes]] = []
        self._threads: list[threading.Thread] = []
        encoded = msgspec.msgpack.encode(job)
        frame = parse_worker.JOB_HEADER.pack(len(encoded)) + encoded
        command, env = _worker_command()
        claims, claims_in = os.pipe()
        try:
            # Every claim is written before any worker starts: 256 bytes fit any pipe's buffer.
            os.write(claims_in, bytes(range(runs)))
            os.close(claims_in)
            claims_in = -1
            for _ in range(workers):
                proc = subprocess.Popen(
                    [*command, str(claims)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    pass_fds=(claims,),
                    env=env,
                )
                self._procs.append(proc)
                thread = threading.Thread(
                    target=self._serve, args=(proc, frame), name="parse-pool", daemon=True
                )
                thread.start()
                self._threads.append(thread)
        except BaseException:
            self.close(finished=False)  # the workers already started, if any
            raise
        finally:
            os.close(claims)
            if claims_in >= 0:
                os.close(claims_in)

    def _serve(self, proc: subprocess.Popen[bytes], frame: bytes) -> None:
        try:
            assert proc.stdin is not None and proc.stdout is not None
            with proc.stdin:
                proc.stdin.write(frame)
            self._receive(proc.stdout)
        except BaseException as exc:  # any way a worker fails ends the pool the same way
            with self._changed:
                if self._failure is None:
                    self._failure = exc
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def _receive(self, stream: IO[bytes]) -> None:
        header = parse_worker.HEADER
        while True:
            head = stream.read(header.size)
            if len(head) != header.size:
                raise WorkerFailed("a parse worker ended without finishing")
            index, size = header.unpack(head)
            if index == parse_worker.DONE:
                return
            payload = stream.read(size)
            if len(payload) != size:
                raise WorkerFailed("a parse worker ended in the middle of a run")
            if index == parse_worker.FAILED:
                raise WorkerFailed(payload.decode("utf-8", "replace"))
            with self._changed:
                self._results[index] = payload
                self._changed.notify_all()

    def take(self, index: int) -> bytes:
        """Run ``index``'s result, waiting for it; raises once any worker has failed."""
        with self._changed:
            while index not in self._results:
                if self._failure is not None:
                    raise WorkerFailed("a parse worker failed") from self._failure
                if self._running == 0:
                    raise WorkerFailed(f"no parse worker sent run {index}")
                self._changed.wait()
            return self._results.pop(index)

    def close(self, finished: bool) -> None:
        """Reap every worker; unless every run was taken (``finished``), kill them first."""
        for proc in self._procs:
            if not finished and proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            proc.wait()
        for thread in self._threads:
            thread.join()
        for proc in self._procs:
            if proc.stdout is not None:
                proc.stdout.close()


def parse_runs(
    repo_path: str, entries: list[tuple[str, pygit2.Oid]], workers: int, *, tokens: bool = True
) -> Generator[ParsedRun, None, None]:
    """The entries parsed on ``workers`` processes, as contiguous runs yielded in tree order as
    soon as each is ready, so the caller folds one run while the pool parses the next.
    ``tokens=False`` (the plane's rebuild) leaves every run's tokens empty.

    When the pool fails (cannot start, a worker dies) the runs stop early with a warning; the
    caller parses the entries from the last run's ``stop`` inline.
    """
    runs = min(max(workers * RUNS_PER_WORKER, 1), 256)
    size = -(-len(entries) // runs)
    bounds = [(start, min(start + size, len(entries))) for start in range(0, len(entries), size)]
    job = parse_worker.Job(
        repo_path,
        [start for start, _ in bounds],
        [[(path, str(oid)) for path, oid in entries[start:stop]] for start, stop in bounds],
        tokens,
    )
    pool: _Pool | None = None
    taken = 0
    try:
        pool = _Pool(job, workers)
        for index, (start, stop) in enumerate(bounds):
            run = _run_of(start, stop, pool.take(index))
            taken += 1
            yield run
    except Exception:  # the pool is an optimization: any failure means "parse inline"
        log.warning("parallel parse unavailable; parsing inline", exc_info=True)
    finally:
        if pool is not None:
            pool.close(finished=taken == len(bounds))
