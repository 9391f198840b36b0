"""SIGTERM while an ``index.rebuild`` runs: the call answers, and the daemon exits cleanly.

Long calls stop at their next batch when the daemon stops, before it drains its in-flight
requests: a rebuild still running when the stop begins answers ``ERR_SHUTTING_DOWN``, the client
is never dropped without an answer, and nothing submits work to a shut-down executor.

Mutation note: ``vectors.stop()``/``plane.stop()`` moved back after ``server.stop()`` in
``main.run`` -> the drain waits for the rebuild (its full result, or no answer when it outlasts
the 10 s drain): red.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.stores import make_store

from bench.support.stores import generated_memories  # the bench's generated memories

#: Well under the daemon's 10 s drain, so a rebuild that is not cut short shows.
EXIT_BOUND_S = 8.0


def sigterm_during(
    store: Path, socket_name: str, method: str, params: dict[str, Any], extra: list[str]
) -> tuple[Any, str]:
    """Start ``method`` on a real daemon, SIGTERM the daemon while it runs, and return the one
    answer the call got and the daemon's log, after checking the stop was clean and in time."""
    socket_path = short_socket_dir() / socket_name
    daemon = Daemon(store, socket_path, extra=["--embedder", "hash", *extra]).wait_ready(
        timeout=120
    )
    answers: list[Any] = []
    started = threading.Event()

    def call() -> None:
        try:
            with Client(socket_path, timeout=60) as c:
                started.set()
                answers.append(c.call(method, params))
        except Exception as exc:
            answers.append(exc)

    try:
        caller = threading.Thread(target=call)
        caller.start()
        started.wait(10)
        time.sleep(0.3)
        daemon.proc.send_signal(signal.SIGTERM)
        try:
            daemon.proc.wait(EXIT_BOUND_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {EXIT_BOUND_S} s after SIGTERM:\n{daemon.log()[-3000:]}")
        caller.join(30)
    finally:
        code = daemon.stop()
    log = daemon.log()
    assert code == 0, log[-3000:]
    assert len(answers) == 1
    # The call was still running when the stop began (the server counts it in flight), so it
    # must end at its next batch: a finished result means the drain waited it out instead.
    assert "stopped accepting; 1 requests in flight" in log, log[-3000:]
    assert "cannot schedule new futures" not in log
    assert "Traceback" not in log, log[-3000:]
    return answers[0], log


@pytest.mark.slow
def test_sigterm_cuts_a_running_rebuild_short_and_it_answers(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store, dict(generated_memories(2000)))
    answer, _ = sigterm_during(
        store, "stop.sock", "index.rebuild", {"embed": True, "force": True}, []
    )
    assert getattr(answer, "code", None) == "ERR_SHUTTING_DOWN", repr(answer)


@pytest.mark.slow
def test_sigterm_stops_a_running_vectors_fill_and_it_answers(tmp_path: Path) -> None:
    """A ``vectors.fill`` still embedding when the stop begins answers what it filled so far (or
    ``ERR_SHUTTING_DOWN``), and the daemon exits within the bound, never waiting the fill out.

    Mutation note: ``or self._stopping`` dropped from ``fill_now``'s loop -> the drain waits for the
    whole fill, which answers with nothing remaining: red."""
    store = tmp_path / "store"
    make_store(store, dict(generated_memories(6000)))
    answer, _ = sigterm_during(
        store, "fill.sock", "vectors.fill", {}, ["--snapshot-interval", "-1"]
    )
    if isinstance(answer, dict):
        assert answer["remaining"] > 0, answer  # cut short: what was filled, the rest left
    else:
        assert getattr(answer, "code", None) == "ERR_SHUTTING_DOWN", repr(answer)
