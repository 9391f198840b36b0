"""``headctl exec``: one read-only script over the head, with ``memhtml exec``'s flags.

The script comes from ``--script S``, ``--file F`` (``-`` for stdin) or, with neither, stdin.
Without ``--json`` the script's stdout and stderr are written as they came back and the exit
status is the script's own (124 when it ran past ``--timeout-ms``), as a shell runs a program;
with ``--json`` the answer is one ``exec.report`` object with memhtml's keys (``corpusMount``,
``sha``, ``exitCode``, ``stdout``, ``stderr``, ``durationMs``, ``timeoutMs``, ``timedOut``) and
the exit status is 0 whenever the script ran, memhtml's contract: a failing script is an answer.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from headd.wire.exec import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
from headd_client.headctl_commands import EXIT_OK, Command, Context, UsageError
from headd_client.sync_client import Client

CORPUS_MOUNT = "/mnt/memhtml"
#: Seconds the client waits beyond the script's own bound (the corpus build, the worker start).
ANSWER_GRACE_S = 30.0


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", nargs="?", metavar="-", help="`-`: read the script from stdin")
    p.add_argument("--file", metavar="F", help="the script as a file (`-`: stdin)")
    p.add_argument("--script", metavar="S", help="the script inline")
    p.add_argument(
        "--timeout-ms",
        type=int,
        default=DEFAULT_TIMEOUT_MS,
        metavar="MS",
        help=f"the script's bound (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); "
        "past it the exit code is 124",
    )
    p.add_argument("--sha", metavar="SHA", help="the commit to run over (default the tip)")


def _script(args: argparse.Namespace, ctx: Context) -> str:
    if args.source not in (None, "-"):
        raise UsageError(f"exec takes the script from --file, --script or stdin, not {args.source}")
    if args.script is not None and (args.file is not None or args.source == "-"):
        raise UsageError("--script excludes --file and stdin")
    if args.script is not None:
        return str(args.script)
    if args.file is not None and args.file != "-":
        try:
            with open(args.file, encoding="utf-8") as handle:
                return handle.read()
        except OSError as exc:
            raise UsageError(
                f"exec cannot read --file {args.file}: {exc.strerror or exc}"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"--file {args.file} is not UTF-8 text") from None
    return ctx.stdin.read()


def report_of(answer: dict[str, Any], timeout_ms: int) -> dict[str, Any]:
    """The answer under memhtml's ``exec.report`` keys."""
    return {
        "corpusMount": CORPUS_MOUNT,
        "sha": answer["sha"],
        "exitCode": answer["exit_code"],
        "stdout": answer["stdout"],
        "stderr": answer["stderr"],
        "durationMs": answer["took_ms"],
        "timeoutMs": timeout_ms,
        "timedOut": answer["timed_out"],
    }


def _run(args: argparse.Namespace, ctx: Context) -> int:
    if not 1 <= args.timeout_ms <= MAX_TIMEOUT_MS:
        raise UsageError(f"--timeout-ms must be between 1 and {MAX_TIMEOUT_MS}")
    params: dict[str, Any] = {"script": _script(args, ctx), "timeout_ms": args.timeout_ms}
    if args.sha is not None:
        params["at"] = args.sha
    wait = max(args.timeout, args.timeout_ms / 1000 + ANSWER_GRACE_S)
    with Client(ctx.socket, timeout=wait) as client:
        answer = client.call("exec", params)
    if args.json:
        ctx.stdout.write(json.dumps(report_of(answer, args.timeout_ms), ensure_ascii=False) + "\n")
        return EXIT_OK
    ctx.stdout.write(answer["stdout"])
    ctx.stderr.write(answer["stderr"])
    return int(answer["exit_code"])


COMMAND = Command(
    ("exec",),
    "run a read-only JavaScript traversal over the corpus (code-mode)",
    _arguments,
    local=_run,
    description="Run one script over a commit of the store: `corpus()`, `backlinks`, `chain`, "
    "`edges`, `walk` and `memoryAt` from /workspace/lib/corpus.mjs, the tree read-only at "
    "/mnt/memhtml. Print the answer as JSON with console.log. See docs/codemode.md.",
)
