"""Runs code-mode scripts in worker processes, off the event loop, at most N at once.

A worker (``headd.codemode.worker``) runs one script at a time, each in a fresh engine runtime,
and is kept for the next script when the last one ended on its own; one that ran past its
deadline, or died, is killed and replaced. Workers start with a stripped environment and their
working directory at ``/``. One worker is started ahead, so the first script does not wait for a
process start; after that, up to N are kept idle between scripts. A worker keeps the last
commit's corpus it was sent, so scripts in a row over one tip send it once.

The runner kills a worker at its script's deadline (the engine cannot interrupt a script that
calls into Python): exit code 124, ``timed_out``, with whatever the script printed until then,
which the worker sends as it is written. A worker that dies without answering (a crash, the
kernel) is exit code 1 with the reason in ``stderr``, never a daemon error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field

import msgspec

from headd.codemode.worker import EXIT_TIMEOUT, MAX_JOBS, Chunk, Job, Outcome, Started

log = logging.getLogger(__name__)

_LINE = msgspec.json.Decoder(Started | Chunk | Outcome)

#: Scripts running at once, unless the daemon is told otherwise (``HEADD_EXEC_WORKERS``).
DEFAULT_WORKERS = 2
#: How long a worker may take to start and set up before its script's own bound starts.
STARTUP_S = 60.0
#: The QuickJS heap a script may use.
DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024
#: stdout and stderr, each.
DEFAULT_OUTPUT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    took_ms: float


def _worker_env() -> dict[str, str]:
    """The worker's environment: enough to import headd, nothing of the daemon's own."""
    paths = [p for p in sys.path if p and os.path.isabs(p)]
    return {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join(paths),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


@dataclass(eq=False)
class Worker:
    """One worker process, what commit's corpus it holds, and how many scripts it has run."""

    process: asyncio.subprocess.Process
    corpus_sha: str = ""
    jobs: int = 0

    @classmethod
    async def start(cls) -> Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "headd.codemode.worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd="/",
            env=_worker_env(),
            start_new_session=True,
        )
        return cls(process)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def kill(self) -> int:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        return await self.process.wait()


@dataclass
class Runner:
    """The pool: ``workers`` scripts at once, each worker one script at a time."""

    workers: int = DEFAULT_WORKERS
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    output_bytes: int = DEFAULT_OUTPUT_BYTES
    _slots: asyncio.Semaphore | None = None
    _idle: list[Worker] = field(default_factory=list)
    _starting: asyncio.Task[Worker] | None = None
    _busy: set[Worker] = field(default_factory=set)

    def _slot(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        return self._slots

    def start_ahead(self) -> None:
        """Start a worker now, for the next script to find ready."""
        if self._starting is None and not self._idle:
            self._starting = asyncio.ensure_future(Worker.start())

    async def _take(self) -> Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
        starting, self._starting = self._starting, None
        if starting is not None:
            with contextlib.suppress(Exception):
                worker = await starting
                if worker.alive:
                    return worker
        return await Worker.start()

    async def run(
        self, script: str, *, git_dir: str, sha: str, corpus_json: bytes, timeout_ms: int
    ) -> ExecResult:
        """Run ``script`` over commit ``sha``; waits for a free slot first."""
        async with self._slot():
            worker = await self._take()
            self._busy.add(worker)
            reusable = False
            try:
                result, reusable = await self._drive(
                    worker, script, git_dir, sha, corpus_json, timeout_ms
                )
                return result
            finally:
                self._busy.discard(worker)
                if reusable and worker.jobs < MAX_JOBS and len(self._idle) < self.workers:
                    self._idle.append(worker)
                else:
                    await worker.kill()
                    self.start_ahead()

    async def _drive(
        self,
        worker: Worker,
        script: str,
        git_dir: str,
        sha: str,
        corpus_json: bytes,
        timeout_ms: int,
    ) -> tuple[ExecResult, bool]:
        """The script's result, and whether the worker is fit for another script."""
        process = worker.process
        assert process.stdin is not None and process.stdout is not None
        send = b"" if worker.corpus_sha == sha else corpus_json
        job = Job(script, git_dir, sha, timeout_ms, self.memory_bytes, self.output_bytes, len(send))
        streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
        started = time.perf_counter()
        deadline = started + STARTUP_S

        def result(exit_code: int, timed_out: bool, failure: str = "") -> ExecResult:
            took = (time.perf_counter() - started) * 1000
            stderr = "".join(streams["stderr"]) + failure
            return ExecResult("".join(streams["stdout"]), stderr, exit_code, timed_out, took)

        try:
            worker.jobs += 1
            worker.corpus_sha = ""  # until the worker has read it
            process.stdin.write(msgspec.json.encode(job) + b"\n" + send)
            await process.stdin.drain()
            worker.corpus_sha = sha
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError
                line = await asyncio.wait_for(process.stdout.readline(), left)
                if not line:
                    break
                message = _LINE.decode(line)
                if isinstance(message, Outcome):
                    return result(message.exit_code, message.timed_out, message.failure), True
                if isinstance(message, Started):
                    deadline = time.perf_counter() + timeout_ms / 1000
                else:
                    streams[message.stream].append(message.text)
        except TimeoutError:
            await worker.kill()
            failure = f"code-mode: the script ran past {timeout_ms} ms\n"
            return result(EXIT_TIMEOUT, True, failure), False
        except (BrokenPipeError, ConnectionResetError, msgspec.DecodeError):
            pass
        code = await worker.kill()
        reason = f"signal {-code}" if code < 0 else f"status {code}"
        log.warning("code-mode worker ended without an answer (%s)", reason)
        return result(1, False, f"code-mode: the script's worker ended ({reason})\n"), False

    async def close(self) -> None:
        """Stop every worker, idle, starting or running."""
        starting, self._starting = self._starting, None
        if starting is not None:
            with contextlib.suppress(BaseException):
                self._idle.append(await starting)
        for worker in [*self._idle, *self._busy]:
            await worker.kill()
        self._idle.clear()
