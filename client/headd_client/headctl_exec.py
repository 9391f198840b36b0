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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from headd.wire.exec_bounds import EXEC_DEFAULT_TIMEOUT_MS, EXEC_MAX_TIMEOUT_MS
from headd_client.exec_call import ANSWER_GRACE_S, exec_call, report_of
from headd_client.sync_client import Client

if TYPE_CHECKING:
    from headd_client.headctl_commands import Subparsers

HELP = "run a read-only JavaScript traversal over the corpus (code-mode)"
DESCRIPTION = (
    "Run one script over a commit of the store: `corpus()`, `backlinks`, `chain`, `edges`, "
    "`walk` and `memoryAt` from /workspace/lib/corpus.mjs, the tree read-only at /mnt/memhtml. "
    "Print the answer as JSON with console.log. See docs/codemode.md."
)


def register(sub: Subparsers, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``exec`` to ``headctl``'s subcommands. Every usage error is found while parsing
    (the bound, the one source, an unreadable ``--file``), so ``headctl`` reports it as it
    reports any other, and running the command is only the call."""
    p = sub.add_parser("exec", help=HELP, description=DESCRIPTION)
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "source", nargs="?", choices=["-"], metavar="-", help="`-`: read the script from stdin"
    )
    source.add_argument(
        "--file", metavar="F", type=_file_text, help="the script as a file (`-`: stdin)"
    )
    source.add_argument("--script", metavar="S", help="the script inline")
    p.add_argument(
        "--timeout-ms",
        type=_bound,
        default=EXEC_DEFAULT_TIMEOUT_MS,
        metavar="MS",
        help=f"the script's bound (default {EXEC_DEFAULT_TIMEOUT_MS}, "
        f"at most {EXEC_MAX_TIMEOUT_MS}); past it the exit code is 124",
    )
    p.add_argument("--sha", metavar="SHA", help="the commit to run over (default the tip)")
    p.set_defaults(run_agent=_run)


def _bound(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= EXEC_MAX_TIMEOUT_MS:
        raise argparse.ArgumentTypeError(f"must be between 1 and {EXEC_MAX_TIMEOUT_MS}")
    return value


def _file_text(name: str) -> str | None:
    """The script in file ``name``; None for ``-`` (stdin, read when the command runs)."""
    if name == "-":
        return None
    try:
        with open(name, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{name} is not UTF-8 text") from None


def _run(
    args: argparse.Namespace,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    script = args.script if args.script is not None else args.file
    call = exec_call(stdin.read() if script is None else script, args.timeout_ms, args.sha)
    wait = max(args.timeout, args.timeout_ms / 1000 + ANSWER_GRACE_S)
    with Client(socket_path, timeout=wait) as client:
        answer = client.run(call)
    if args.json:
        stdout.write(json.dumps(report_of(answer, args.timeout_ms), ensure_ascii=False) + "\n")
        return 0
    stdout.write(answer.stdout)
    stderr.write(answer.stderr)
    return answer.exit_code
