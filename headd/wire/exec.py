"""``exec``: one read-only script over a version of the head (docs/codemode.md).

The request and the answer as the daemon, ``headctl exec`` and the MCP bridge share them. The
bounds are memhtml's (``memhtml help exec``): a 30 s default and a 600 s cap on the script's
time; a script over :data:`MAX_SCRIPT_BYTES` is refused before any worker starts.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000
#: 1 MiB of UTF-8: a script is a traversal, not a payload.
MAX_SCRIPT_BYTES = 1024 * 1024
#: Exit code of a script cut off at its bound (the shell's ``timeout``).
EXIT_TIMED_OUT = 124


class Exec(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``exec``'s params: the script, its language, the commit (the tip when None), its bound."""

    script: str
    lang: Literal["js"] = "js"
    at: str | None = None
    timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=MAX_TIMEOUT_MS)] = DEFAULT_TIMEOUT_MS


class ExecAnswer(msgspec.Struct, frozen=True):
    """``exec``'s answer. A script that fails is still an answer: ``exit_code`` 1 and its stack
    in ``stderr``, or 124 with ``timed_out``; an error is the daemon failing to run it."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    sha: str
    took_ms: float
