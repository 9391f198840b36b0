"""``exec`` in the daemon: the commit's corpus built off the event loop, the script in a worker.

The corpus is built on a thread of its own at background priority (the first build of a version
parses the files no earlier version shared; every later script over it reuses the bytes), and
the script runs in a worker process (``headd.codemode.runner``). The event loop only waits on
both, so a search is answered while scripts run. How many scripts run at once is
``HEADD_EXEC_WORKERS`` (2 by default); more wait their turn.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from headd.codemode.corpus import CorpusCache
from headd.codemode.runner import DEFAULT_WORKERS, Runner
from headd.errors import InvalidParams
from headd.thread_priority import lower_thread_priority
from headd.wire.answers import ExecAnswer
from headd.wire.exec_bounds import EXEC_MAX_SCRIPT_BYTES
from headd.wire.methods import Exec

WORKERS_ENV = "HEADD_EXEC_WORKERS"


def workers_from_env(environ: dict[str, str] | None = None) -> int:
    """``HEADD_EXEC_WORKERS`` as a count of at least one, else the default."""
    raw = (os.environ if environ is None else environ).get(WORKERS_ENV, "")
    try:
        return max(1, int(raw))
    except ValueError:
        return DEFAULT_WORKERS


def check_script(request: Exec) -> None:
    """Refuse a script over the size limit before anything runs."""
    size = len(request.script.encode("utf-8", errors="surrogatepass"))
    if size > EXEC_MAX_SCRIPT_BYTES:
        raise InvalidParams(
            f"invalid params for exec: the script is {size} bytes, over {EXEC_MAX_SCRIPT_BYTES}",
            {"field": "script", "bytes": size, "limit": EXEC_MAX_SCRIPT_BYTES},
        )


@dataclass
class ExecService:
    """The corpus cache, the git directory workers read, and the runner."""

    store: Path
    runner: Runner = field(default_factory=lambda: Runner(workers=workers_from_env()))
    cache: CorpusCache = field(default_factory=CorpusCache)
    _thread: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            1, thread_name_prefix="headd-exec", initializer=lower_thread_priority
        )
    )
    _repo: pygit2.Repository | None = None

    def _git(self) -> pygit2.Repository:
        if self._repo is None:
            self._repo = pygit2.Repository(str(self.store))
        return self._repo

    async def exec(self, request: Exec, sha: str) -> ExecAnswer:
        check_script(request)
        self.runner.start_ahead()  # a worker starts while the corpus is built
        repo = self._git()
        loop = asyncio.get_running_loop()
        corpus_json = await loop.run_in_executor(self._thread, self.cache.corpus_json, repo, sha)
        result = await self.runner.run(
            request.script,
            git_dir=repo.path,
            sha=sha,
            corpus_json=corpus_json,
            timeout_ms=request.timeout_ms,
        )
        return ExecAnswer(
            stdout=result.stdout,
            stderr=result.stderr,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            sha=sha,
            took_ms=round(result.took_ms, 3),
        )

    async def close(self) -> None:
        await self.runner.close()
        self._thread.shutdown(wait=False, cancel_futures=True)
