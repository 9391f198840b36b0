"""Runs code-mode scripts in worker processes, off the event loop, at most N at once.

Each script gets a fresh ``headd.codemode.worker`` process (see its docstring for why a process),
started with a stripped environment and its working directory at ``/``. One process is kept
started ahead, its imports done and waiting for a job, so a script pays for a process start
only when several arrive together. The runner kills the process at the script's deadline (the
engine cannot interrupt a script that calls into Python): exit code 124, ``timed_out``, with
whatever the script printed until then, which the worker sends as it is written.
A worker that dies without answering (the kernel's memory or CPU limits) is exit code 1 with the
reason in ``stderr``, never a daemon error.
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

from headd.codemode.worker import EXIT_TIMEOUT, Chunk, Job, Outcome, Started

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


async def _spawn() -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "headd.codemode.worker",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd="/",
        env=_worker_env(),
        start_new_session=True,
    )


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


@dataclass
class Runner:
    """The pool: ``workers`` scripts at once, each in its own process."""

    workers: int = DEFAULT_WORKERS
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    output_bytes: int = DEFAULT_OUTPUT_BYTES
    _slots: asyncio.Semaphore | None = None
    _spare: asyncio.Task[asyncio.subprocess.Process] | None = None
    _running: set[asyncio.subprocess.Process] = field(default_factory=set)

    def _slot(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        return self._slots

    async def _process(self) -> asyncio.subprocess.Process:
        spare, self._spare = self._spare, asyncio.ensure_future(_spawn())
        if spare is not None:
            with contextlib.suppress(Exception):
                process = await spare
                if process.returncode is None:
                    return process
        return await _spawn()

    async def run(
        self, script: str, *, git_dir: str, sha: str, corpus_json: bytes, timeout_ms: int
    ) -> ExecResult:
        """Run ``script`` over commit ``sha``; waits for a free slot first."""
        async with self._slot():
            process = await self._process()
            self._running.add(process)
            try:
                return await self._drive(process, script, git_dir, sha, corpus_json, timeout_ms)
            finally:
                self._running.discard(process)
                _kill(process)
                with contextlib.suppress(ProcessLookupError):
                    await process.wait()

    async def _drive(
        self,
        process: asyncio.subprocess.Process,
        script: str,
        git_dir: str,
        sha: str,
        corpus_json: bytes,
        timeout_ms: int,
    ) -> ExecResult:
        job = Job(script, git_dir, sha, timeout_ms, self.memory_bytes, self.output_bytes)
        assert process.stdin is not None and process.stdout is not None
        streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
        started = time.perf_counter()
        deadline = started + STARTUP_S

        def result(exit_code: int, timed_out: bool, failure: str = "") -> ExecResult:
            took = (time.perf_counter() - started) * 1000
            stderr = "".join(streams["stderr"]) + failure
            return ExecResult("".join(streams["stdout"]), stderr, exit_code, timed_out, took)

        try:
            process.stdin.write(msgspec.json.encode(job) + b"\n")
            process.stdin.write(corpus_json)
            await process.stdin.drain()
            process.stdin.close()
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError
                line = await asyncio.wait_for(process.stdout.readline(), left)
                if not line:
                    break
                message = _LINE.decode(line)
                if isinstance(message, Outcome):
                    return result(message.exit_code, message.timed_out, message.failure)
                if isinstance(message, Started):
                    deadline = time.perf_counter() + timeout_ms / 1000
                else:
                    streams[message.stream].append(message.text)
        except TimeoutError:
            _kill(process)
            return result(EXIT_TIMEOUT, True, f"code-mode: the script ran past {timeout_ms} ms\n")
        except (BrokenPipeError, ConnectionResetError, msgspec.DecodeError):
            pass
        _kill(process)
        code = await process.wait()
        reason = f"signal {-code}" if code < 0 else f"status {code}"
        log.warning("code-mode worker ended without an answer (%s)", reason)
        return result(1, False, f"code-mode: the script's worker ended ({reason})\n")

    async def close(self) -> None:
        """Stop the spare and any running worker."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.cancel()
            with contextlib.suppress(BaseException):
                process = await spare
                _kill(process)
                await process.wait()
        for process in list(self._running):
            _kill(process)
