"""The ``exec`` call as ``headctl exec`` and ``memory_exec`` both make it, and its answer
under memhtml's ``exec.report`` keys (``corpusMount``, ``sha``, ``exitCode``, ``stdout``,
``stderr``, ``durationMs``, ``timeoutMs``, ``timedOut``), the shape both hand back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from headd_client.json_types import JsonObject

if TYPE_CHECKING:
    from headd.wire.answers import ExecAnswer
    from headd_client.calls import Call

CORPUS_MOUNT = "/mnt/memhtml"
#: Seconds the client waits beyond the script's own bound (the corpus build, the worker start).
ANSWER_GRACE_S = 30.0


def exec_call(script: str, timeout_ms: int, sha: str | None) -> Call[ExecAnswer]:
    """The ``exec`` call, typed at both ends: the request the daemon decodes, the answer it sends.

    Its types are imported here, on the way to a script: every other ``headctl`` command loads
    this module and has no use for them."""
    from headd.wire.answers import ExecAnswer
    from headd.wire.methods import Exec
    from headd_client.calls import Call

    return Call(Exec(script=script, at=sha, timeout_ms=timeout_ms), ExecAnswer)


def report_of(answer: ExecAnswer, timeout_ms: int) -> JsonObject:
    """The answer under memhtml's ``exec.report`` keys."""
    return {
        "corpusMount": CORPUS_MOUNT,
        "sha": answer.sha,
        "exitCode": answer.exit_code,
        "stdout": answer.stdout,
        "stderr": answer.stderr,
        "durationMs": answer.took_ms,
        "timeoutMs": timeout_ms,
        "timedOut": answer.timed_out,
    }
