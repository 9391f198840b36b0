"""``headctl``: a thin command line over the client library (docs/protocol.md, ``headctl``).

``headctl [--store PATH] [--socket PATH] [--json] COMMAND …``. Each command is one method call;
output is designed for a person (aligned columns, ``headctl_output``), or one JSON document with
``--json``. Exit 0 on success, 1 on a runtime failure, 2 on a usage error; a failure prints exactly
one line ``ERR_…: message`` on stderr, and with ``--json`` also one JSON error document on stdout.
The global options (``--json``, ``--store``, ``--socket``, ``--timeout``, ``--verbose``) are
accepted anywhere on the line, before or after the command words.

The commands themselves, their arguments and the parser are ``headctl_commands``; this module
runs one: parse, call (or fall back to the in-process paths), show, and turn a failure into its
one line.

Some commands need no daemon: ``check`` (the parser's own command line, ``headd.memfile.check``)
and ``init`` (lays a new store out); ``gate``, which asks the daemon when one serves the store
and otherwise loads both versions in this process; and ``index``, ``state`` and ``traces``, which
otherwise run the same plane calls on the store's SQLite plane here (``plane_local``). Either way
the answer is the same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import msgspec

from headd.errors import (
    DaemonUnavailable,
    DiscriminationFailed,
    GitFailure,
    HeaddError,
    InvalidMemory,
    InvalidParams,
    PathNotFound,
    RpcError,
    WriteConflict,
)
from headd_client.discovery import client_store, find_socket
from headd_client.headctl_commands import (
    COMMANDS,
    CONTRIBUTORS,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    Context,
    Failure,
    Params,
    UsageError,
    build_parser,
    register,
)
from headd_client.json_types import JsonIn, JsonInObject, JsonObject, JsonValue
from headd_client.store_check import store_problem
from headd_client.sync_client import Client

if TYPE_CHECKING:
    from headd_client.calls import Call


def _contributed_commands() -> None:
    """Commands other modules add: each is one ``register(...)`` call, or one hook, here."""
    from headd_client.agent_cli import register as register_agent_commands
    from headd_client.headctl_commands import GROUPS, PARSER_HOOKS
    from headd_client.headctl_doctor import commands as doctor_commands
    from headd_client.headctl_exec import register as register_exec
    from headd_client.headctl_memhtml import commands as memhtml_commands
    from headd_client.headctl_publish import commands as publish_commands
    from headd_client.headctl_tasks import commands as task_commands

    PARSER_HOOKS.append(register_agent_commands)  # mcp, integrations, hook
    PARSER_HOOKS.append(register_exec)
    from headd_client.import_cli import register as register_import_commands

    PARSER_HOOKS.append(register_import_commands)  # import, forget, doctor --secrets
    for command in memhtml_commands():  # write, apply, correct, link, archive, list, neighbors
        register(command)
    for command in task_commands():  # task add/status/list, entity activity
        register(command, GROUPS.get(command.words[0]))
    for command in doctor_commands():
        register(command)
    for command in publish_commands():
        register(command)
    from headd_client.headctl_sleep import GROUP_HELP
    from headd_client.headctl_sleep import commands as sleep_commands

    for command in sleep_commands(Command):
        register(command, GROUP_HELP)
    from headd_client.console import command as ui

    register(Command(("ui",), ui.HELP, arguments=ui.arguments, local=ui.run))


CONTRIBUTORS.append(_contributed_commands)

#: Seconds a plane scan may run before ``headctl`` says on stderr that it is still working.
PROGRESS_AFTER_S = 2.0
PROGRESS_EVERY_S = 10.0
_LONG_METHODS = frozenset({"traces.index", "index.rebuild", "index.update", "vectors.fill"})

USAGE_CODE = "ERR_USAGE"
BROKEN_PIPE_CODE = "ERR_OUTPUT_CLOSED"
__all__ = ["COMMANDS", "Command", "build_parser", "main", "register", "run"]

# -- running without a daemon -------------------------------------------------------------


def gate_in_process(store: Path, params: JsonInObject) -> tuple[JsonObject, str]:
    """The gate computed here, when no daemon serves the store: (report, failure line)."""
    from headd_client.local_gate import run_gate

    return run_gate(store, params)


def _local_methods() -> frozenset[str]:
    from headd_client.plane_local import LOCAL_METHODS

    return LOCAL_METHODS


def plane_in_process(
    store: Path, method: str, params: JsonInObject, environ: Mapping[str, str]
) -> object:
    """A plane method answered here, when no daemon serves the store: the Struct the daemon
    would have answered."""
    from headd_client.plane_local import call_local

    return call_local(store, method, params, environ)


@contextlib.contextmanager
def progress(method: str, stderr: TextIO) -> Iterator[None]:
    """For a scan or a rebuild that runs long (a first trace scan reads every transcript), a
    line on stderr after ``PROGRESS_AFTER_S`` and then every ``PROGRESS_EVERY_S`` seconds."""
    if method not in _LONG_METHODS:
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        wait = PROGRESS_AFTER_S
        while not done.wait(wait):
            elapsed = time.monotonic() - started
            print(f"headctl: {method} still running ({elapsed:.0f} s)", file=stderr, flush=True)
            wait = PROGRESS_EVERY_S

    ticker = threading.Thread(target=tick, name="headctl-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()


def describe_gate(report: JsonIn) -> str:
    from headd_client.local_gate import describe

    return describe(report)


def _to_plain(value: object) -> JsonValue:
    plain: JsonValue = msgspec.json.decode(msgspec.json.encode(value))
    return plain


# -- failures -----------------------------------------------------------------------------


def _failure_of(exc: HeaddError | RpcError, ctx: Context | None) -> Failure:
    if isinstance(exc, DaemonUnavailable) and ctx is not None:
        return Failure(exc.code, _unavailable_message(exc, ctx), EXIT_FAILURE, exc.details)
    if isinstance(exc, HeaddError):
        return Failure(exc.code, exc.message, EXIT_FAILURE, exc.details)
    status = EXIT_USAGE if isinstance(exc, InvalidParams) else EXIT_FAILURE
    details = exc.data if isinstance(exc.data, dict) else {}
    return Failure(_rpc_name(exc), exc.message, status, details)


def _unavailable_message(exc: DaemonUnavailable, ctx: Context) -> str:
    """Why no daemon answered, and what to run so one does."""
    store = ctx.store
    problem = store_problem(store)
    if problem is not None:
        return problem
    return (
        f"{exc.message}; start the daemon with `headd --store {store}` "
        "(or `systemctl --user start headd.socket`)"
    )


def _rpc_name(exc: RpcError) -> str:
    return {
        -32700: "ERR_PARSE",
        -32600: "ERR_INVALID_REQUEST",
        -32601: "ERR_METHOD_NOT_FOUND",
        -32602: "ERR_INVALID_PARAMS",
    }.get(exc.rpc_code, "ERR_INTERNAL")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def answer_failure(
    method: str, result: JsonValue, params: Mapping[str, JsonValue] | None = None
) -> Failure | None:
    """The failure an answer stands for, else None.

    ``session.apply`` with violations appended nothing, ``session.commit`` answered
    ``refused`` or ``rebase-needed``, ``read`` found nothing: answers, not errors, on the wire,
    but a script running ``headctl`` needs a non-zero exit to notice. Kinds are named, never
    file content. The answer is read as the JSON ``--json`` prints: the session results' types
    live with the store, whose import loads git.
    """
    if not isinstance(result, dict):
        return None
    if method == "read" and result.get("record") is None:
        return Failure(
            PathNotFound.code,
            f"no memory at {(params or {}).get('path', 'that path')} "
            f"(at {str(result.get('sha'))[:12]})",
            details={"path": (params or {}).get("path"), "sha": result.get("sha")},
        )
    listed = result.get("violations")
    violations = [v for v in listed if isinstance(v, dict)] if isinstance(listed, list) else []
    kinds = ", ".join(sorted({str(v.get("kind")) for v in violations}))
    if method == "sleep.merge" and not result.get("merged", False):
        return Failure(DiscriminationFailed.code, f"sleep merge refused: {result.get('reason')}")
    if method == "session.apply" and violations:
        return Failure(InvalidMemory.code, f"apply refused, nothing appended ({kinds})")
    if method == "session.commit":
        outcome = result.get("outcome")
        if outcome == "refused":
            return Failure(InvalidMemory.code, f"commit refused ({kinds})")
        if outcome == "rebase-needed":
            paths = result.get("overlapping")
            overlapping = len(paths) if isinstance(paths, list) else 0
            conflicts = f", {kinds} at the tip" if kinds else ""
            return Failure(
                WriteConflict.code,
                f"the branch moved since the session's base ({overlapping} overlapping paths"
                f"{conflicts}); run headctl session rebase",
            )
    return None


def sync_failure(result: object) -> Failure | None:
    """A ``sync`` whose round failed: an answer on the wire, a failure to a script (exit 1),
    with the remote's last error as its reason."""
    from headd.wire.remote_answers import SyncAnswer
    from headd_client import calls

    answer = result if isinstance(result, SyncAnswer) else calls.sync().decode(result)
    if isinstance(answer.round, msgspec.UnsetType) or answer.round.action != "failed":
        return None
    error = None if answer.remote is None else answer.remote.last_error
    reason = "see headctl status" if error is None else f"{error.kind}: {error.message}"
    return Failure(GitFailure.code, f"the round with the remote failed ({_one_line(reason)})")


def session_refusal(method: str, result: JsonValue) -> str | None:
    """The one failure line for a session write that did not happen, else None."""
    failure = answer_failure(method, result) if method.startswith("session.") else None
    return None if failure is None else f"{failure.code}: {failure.message}"


# -- the run ------------------------------------------------------------------------------

_VALUED_OPTIONS = frozenset({"--store", "--socket", "--timeout"})


def _command_index(argv: Sequence[str]) -> int | None:
    """Where the command word is, skipping global options and their values."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _VALUED_OPTIONS:
            i += 2
            continue
        if token.startswith("-"):
            i += 1
            continue
        return i
    return None


def _run_check(
    argv: list[str], idx: int, environ: Mapping[str, str], stdout: TextIO, stderr: TextIO
) -> int:
    """``headctl check``: the parser's own command line, with the global ``--json`` passed on
    and the global options taken out wherever they stand. A relative path that is not there
    from the working directory but is in the store (``--store``, else the default store) is
    the store's, so ``headctl check areas/`` checks the store's areas from anywhere."""
    from headd.memfile.check import main as check_main

    store_flag, rest, i = None, [], 0
    words = argv[:idx] + argv[idx + 1 :]
    while i < len(words):
        word = words[i]
        if word in _VALUED_OPTIONS and i + 1 < len(words):
            store_flag = words[i + 1] if word == "--store" else store_flag
            i += 2
            continue
        if word.startswith("--store="):
            store_flag = word.split("=", 1)[1]
        elif word != "--verbose" and not word.startswith(("--socket=", "--timeout=")):
            rest.append(word)
        i += 1
    store = client_store(store_flag, environ)
    rest = [
        str(store / word)
        if not word.startswith("-")
        and not os.path.isabs(word)
        and not os.path.lexists(word)
        and os.path.lexists(store / word)
        else word
        for word in rest
    ]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        return int(check_main(rest) or 0)


def _is_utf8(arg: str) -> bool:
    """Whether an argument decoded from UTF-8 bytes (Python keeps other bytes as surrogates)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse(argv: list[str], stdout: TextIO) -> argparse.Namespace:
    """Parse, with ``--help`` and ``--version`` printed on ``stdout`` (SystemExit(0) follows)."""
    with contextlib.redirect_stdout(stdout):
        return build_parser().parse_args(argv)


def run(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    connect: Callable[[Path, float], Client] | None = None,
) -> int:
    argv = list(argv)
    idx = _command_index(argv)
    if idx is not None and argv[idx] == "check":
        return _run_check(argv, idx, environ, stdout, stderr)
    as_json = "--json" in argv
    undecodable = next((arg for arg in argv if not _is_utf8(arg)), None)
    if undecodable is not None:
        shown = undecodable.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        message = f"an argument is not UTF-8 text: {shown!r}"
        return Failure(USAGE_CODE, message, EXIT_USAGE).report(as_json, stdout, stderr)
    try:
        args = _parse(argv, stdout)
    except UsageError as exc:
        return Failure(USAGE_CODE, str(exc), EXIT_USAGE).report(as_json, stdout, stderr)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    store = client_store(args.store, environ)
    ctx = Context(store, find_socket(args.socket, store, environ), environ, stdin, stdout, stderr)
    try:
        runner = getattr(args, "run_agent", None)
        if runner is not None:  # a command added through PARSER_HOOKS
            return int(runner(args, ctx.store, ctx.socket, environ, stdin, stdout, stderr))
        command: Command = args._command
        if command.local is not None:
            return command.local(args, ctx)
        assert command.request is not None
        return _call_and_show(command, args, ctx, command.request(args, ctx), connect)
    except UsageError as exc:
        return Failure(USAGE_CODE, str(exc), EXIT_USAGE).report(args.json, stdout, stderr)
    except (HeaddError, RpcError) as exc:
        return _failure_of(exc, ctx).report(args.json, stdout, stderr)


def _call_and_show(
    command: Command,
    args: argparse.Namespace,
    ctx: Context,
    request: tuple[str, Params] | Call[object],
    connect: Callable[[Path, float], Client] | None,
) -> int:
    """Make the command's call (a typed one answers its Struct) and show the answer."""
    if isinstance(request, tuple):
        typed, (method, params) = None, request
    else:
        typed, method, params = request, request.method, request.params
    params = {k: v for k, v in params.items() if v is not None}
    make = connect or (lambda path, timeout: Client(path, timeout=timeout))
    failure_line = ""
    answer: object
    try:
        with progress(method, ctx.stderr), make(ctx.socket, args.timeout) as client:
            answer = client.call(method, params) if typed is None else client.run(typed)
        if method == "gate":
            failure_line = describe_gate(_to_plain(answer))
    except DaemonUnavailable:
        if method == "gate":
            answer, failure_line = gate_in_process(ctx.store, params)
        elif method in _local_methods():
            with progress(method, ctx.stderr):
                answer = plane_in_process(ctx.store, method, params, ctx.environ)
        else:
            raise
    failure = sync_failure(answer) if method == "sync" else None
    result = command.select(_to_plain(answer), args)
    failure = failure or answer_failure(method, result, params)
    passed = isinstance(result, dict) and result.get("passed", False)
    if method == "gate" and not passed:
        failure = Failure(DiscriminationFailed.code, failure_line)
    if args.json:
        if failure is None or method in ("gate", "session.apply", "session.commit", "sleep.merge"):
            ctx.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
            if failure is not None:
                return failure.report(False, ctx.stdout, ctx.stderr)
            return EXIT_OK
        return failure.report(True, ctx.stdout, ctx.stderr)
    if failure is not None and method == "read":
        return failure.report(False, ctx.stdout, ctx.stderr)
    command.human(result, args, ctx.stdout)
    if failure is not None:
        return failure.report(False, ctx.stdout, ctx.stderr)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = run(
            sys.argv[1:] if argv is None else argv,
            environ=os.environ,
            stdin=sys.stdin,
            stdout=sys.stdout,
            stderr=sys.stderr,
        )
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): say so once, and let the interpreter's own final
        # flush of stdout write nowhere instead of printing a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print(
            f"{BROKEN_PIPE_CODE}: the output was closed before headctl wrote it all",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("ERR_INTERRUPTED: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
