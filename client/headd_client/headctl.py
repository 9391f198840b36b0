"""``headctl``: a thin command line over the client library (contract section 5).

``headctl [--store PATH] [--socket PATH] [--json] COMMAND …``. Each command is one method call;
output is human-readable, or one JSON document with ``--json``. Exit 0 on success, 1 on a runtime
failure, 2 on a usage error; a failure prints exactly one line ``ERR_…: message`` on stderr.

Some commands need no daemon: ``check`` (the parser's own command line, ``headd.memfile.check``);
``gate``, which asks the daemon when one serves the store and otherwise loads both versions in
this process; and ``index``, ``state`` and ``traces``, which otherwise run the same plane calls on
the store's SQLite plane here (``plane_local``). Either way the answer is the same.
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
from typing import Any, NoReturn, TextIO

import msgspec

from headd.errors import (
    DaemonUnavailable,
    DiscriminationFailed,
    HeaddError,
    InvalidMemory,
    InvalidParams,
    RpcError,
    WriteConflict,
)
from headd.wire.socket_path import resolve_socket, resolve_store
from headd_client.agent_cli import register as register_agent_commands
from headd_client.sync_client import Client

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

#: Seconds a plane scan may run before ``headctl`` says on stderr that it is still working.
PROGRESS_AFTER_S = 2.0
PROGRESS_EVERY_S = 10.0
_LONG_METHODS = frozenset({"traces.index", "index.rebuild", "index.update"})


class UsageError(Exception):
    """A command line that does not parse; exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so we own the one-line form."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="headctl", description="Talk to headd, the memhtml head daemon.")
    parser.add_argument("--store", help="the store (default $MEMHTML_ROOT, else ~/memhtml)")
    parser.add_argument(
        "--socket", help="the daemon's socket (default $HEADD_SOCKET, else in the store)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for an answer"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    status = sub.add_parser("status", help="what the daemon holds")
    status.add_argument(
        "--memory", action="store_true", help="only where its memory goes (status.memory)"
    )

    p = sub.add_parser("search", help="search the head")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--at")
    p.add_argument("--session")
    p.add_argument("--type", dest="types", action="append", default=None)
    p.add_argument("--now")
    p.add_argument("--plane", choices=("head", "index"), default=None)

    p = sub.add_parser("recall", help="the SQLite plane's disclosure pack for a query")
    p.add_argument("query")
    p.add_argument("--budget", type=int, dest="budget_chars")
    p.add_argument("--type", dest="types", action="append", default=None)

    p = sub.add_parser("reinforce", help="note that memories were used (state plane)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--signal", choices=("neutral", "positive", "negative"), default="neutral")

    p = sub.add_parser("index", help="the SQLite index (works without a daemon)")
    ss = p.add_subparsers(dest="index_command", required=True, parser_class=_Parser)
    q = ss.add_parser("rebuild")
    q.add_argument("--embed", action="store_true", default=None)
    q.add_argument("--force", action="store_true", default=None)
    q = ss.add_parser("update")
    q.add_argument("--embed", action="store_true", default=None)
    ss.add_parser("status")

    p = sub.add_parser("state", help="the state sidecar (works without a daemon)")
    ss = p.add_subparsers(dest="state_command", required=True, parser_class=_Parser)
    ss.add_parser("export", help="write .memhtml/state/access.jsonl (not committed)")
    ss.add_parser("import", help="merge .memhtml/state/access.jsonl into state.db")

    p = sub.add_parser("traces", help="the transcript index (works without a daemon)")
    ss = p.add_subparsers(dest="traces_command", required=True, parser_class=_Parser)
    q = ss.add_parser("index")
    q.add_argument("--trace-root")
    q = ss.add_parser("search")
    q.add_argument("query", nargs="?", default="")
    q.add_argument("--limit", type=int, default=10)
    q = ss.add_parser("show")
    q.add_argument("session")

    p = sub.add_parser("read", help="one memory's record")
    p.add_argument("path")
    p.add_argument("--at")
    p.add_argument("--session")

    p = sub.add_parser("skipped", help="files the head could not parse")
    p.add_argument("--at")

    p = sub.add_parser("resolve", help="follow archive moves and supersedes links forward")
    p.add_argument("path")

    p = sub.add_parser("advance", help="advance to the ref's tip (or load TO)")
    p.add_argument("to", nargs="?")

    p = sub.add_parser("gate", help="the head gate between two commits")
    p.add_argument("base")
    p.add_argument("landed")
    p.add_argument("--probes", type=int, default=200)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=1)

    p = sub.add_parser("session", help="agent sessions")
    ss = p.add_subparsers(dest="session_command", required=True, parser_class=_Parser)
    q = ss.add_parser("open")
    q.add_argument("--id")
    q.add_argument("--base")
    q = ss.add_parser("apply", help="append ops (a JSON array or JSON lines) from FILE or stdin")
    q.add_argument("session")
    q.add_argument("file", nargs="?", default="-")
    q = ss.add_parser("commit")
    q.add_argument("session")
    q.add_argument("--message", "-m")
    q.add_argument("--trace-session", help="the transcript session the writes came from")
    q.add_argument("--prompt", help="its prompt id")
    q.add_argument("--turn", help="its turn (uuid)")
    q = ss.add_parser("rebase")
    q.add_argument("session")
    q.add_argument("--onto")
    q = ss.add_parser("close")
    q.add_argument("session")
    ss.add_parser("list")

    p = sub.add_parser("call", help="call any method with JSON params")
    p.add_argument("method")
    p.add_argument("params", nargs="?", default="{}")

    sub.add_parser("check", help="check memory files (no daemon needed)", add_help=False)
    register_agent_commands(sub, _Parser)
    return parser


# -- human output -------------------------------------------------------------------------


def _print_mapping(value: Mapping[str, Any], out: TextIO, indent: str = "") -> None:
    for key, item in value.items():
        if isinstance(item, Mapping):
            print(f"{indent}{key}:", file=out)
            _print_mapping(item, out, indent + "  ")
        elif isinstance(item, list) and item and isinstance(item[0], Mapping):
            print(f"{indent}{key}:", file=out)
            for row in item:
                print(f"{indent}  - " + ", ".join(f"{k}={v}" for k, v in row.items()), file=out)
        elif isinstance(item, list):
            print(f"{indent}{key}: {', '.join(str(x) for x in item)}", file=out)
        else:
            print(f"{indent}{key}: {item}", file=out)


def _human_search(result: Mapping[str, Any], out: TextIO) -> None:
    for rank, hit in enumerate(result.get("hits", []), 1):
        print(f"{rank:>3}. {hit['score']:.6f}  {hit['path']}  [{', '.join(hit['arms'])}]", file=out)
        print(f"     {hit.get('title') or ''}", file=out)
    degraded = " (degraded: no vector arm)" if result.get("degraded") else ""
    print(
        f"{len(result.get('hits', []))} hits at {str(result.get('sha'))[:12]}{degraded}", file=out
    )


def _human_gate(report: Mapping[str, Any], out: TextIO) -> None:
    verdict = "passed" if report.get("passed") else "refused"
    print(
        f"head gate {verdict}: {report.get('probes')} probes, MRR {report.get('mrr_before')} → "
        f"{report.get('mrr')} (floor {report.get('floor')}), inversions "
        f"{report.get('inversions_before')} → {len(report.get('inversions') or [])}",
        file=out,
    )


def _human(command: str, result: Any, out: TextIO) -> None:
    if command == "search":
        _human_search(result, out)
    elif command == "gate":
        _human_gate(result, out)
    elif command == "read" and isinstance(result, Mapping) and result.get("record") is None:
        print(f"no memory at that path (at {str(result.get('sha'))[:12]})", file=out)
    elif isinstance(result, Mapping):
        _print_mapping(result, out)
    elif isinstance(result, list):
        for item in result:
            print(item, file=out)
    elif result is not None:
        print(result, file=out)


# -- commands -----------------------------------------------------------------------------


def _read_ops(source: str, stdin: TextIO) -> list[Any]:
    text = stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    text = text.strip()
    if not text:
        return []
    try:
        if text.startswith("["):
            ops = json.loads(text)
        else:
            ops = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise UsageError(f"ops are not JSON: {exc}") from None
    if not isinstance(ops, list):
        raise UsageError("ops must be a JSON array or JSON lines")
    return ops


def _request_for(args: argparse.Namespace, stdin: TextIO) -> tuple[str, dict[str, Any]]:
    """The method and params a command stands for."""
    command = args.command
    if command == "status":
        return "status", {}
    if command == "search":
        params: dict[str, Any] = {"query": args.query, "limit": args.limit}
        params.update(at=args.at, session=args.session, now=args.now)
        if args.types:
            params["filter"] = {"types": args.types}
        params["plane"] = args.plane
        return "search", params
    if command == "recall":
        params = {"query": args.query, "budget_chars": args.budget_chars}
        if args.types:
            params["filter"] = {"types": args.types}
        return "recall", params
    if command == "reinforce":
        return "reinforce", {"paths": args.paths, "signal": args.signal}
    if command == "index":
        ic = args.index_command
        if ic == "rebuild":
            return "index.rebuild", {"embed": args.embed, "force": args.force}
        if ic == "update":
            return "index.update", {"embed": args.embed}
        return "index.status", {}
    if command == "state":
        return f"state.{args.state_command}", {}
    if command == "traces":
        tc = args.traces_command
        if tc == "index":
            return "traces.index", {"trace_root": args.trace_root}
        if tc == "search":
            return "traces.search", {"query": args.query, "limit": args.limit}
        return "traces.show", {"session": args.session}
    if command == "read":
        return "read", {"path": args.path, "at": args.at, "session": args.session}
    if command == "skipped":
        return "skipped", {"at": args.at}
    if command == "resolve":
        return "resolve", {"path": args.path}
    if command == "advance":
        return "advance", {"to": args.to}
    if command == "gate":
        return "gate", _gate_params(args)
    if command == "call":
        try:
            params = json.loads(args.params)
        except json.JSONDecodeError as exc:
            raise UsageError(f"params are not JSON: {exc}") from None
        if not isinstance(params, dict):
            raise UsageError("params must be a JSON object")
        return args.method, params
    if command == "session":
        sc = args.session_command
        if sc == "open":
            return "session.open", {"id": args.id, "base": args.base}
        if sc == "apply":
            return "session.apply", {"session": args.session, "ops": _read_ops(args.file, stdin)}
        if sc == "commit":
            return "session.commit", {
                "session": args.session,
                "message": args.message,
                "session_id": args.trace_session,
                "prompt_id": args.prompt,
                "turn": args.turn,
            }
        if sc == "rebase":
            return "session.rebase", {"session": args.session, "onto": args.onto}
        if sc == "close":
            return "session.close", {"session": args.session}
        return "session.list", {}
    raise UsageError(f"unknown command {command}")


def _gate_params(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "base": args.base,
        "landed": args.landed,
        "probes": args.probes,
        "k": args.k,
        "tolerance": args.tolerance,
        "seed": args.seed,
    }


def gate_in_process(store: Path, params: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The gate computed here, when no daemon serves the store: (report, failure line)."""
    from headd_client.local_gate import run_gate

    return run_gate(store, params)


def _local_methods() -> frozenset[str]:
    from headd_client.plane_local import LOCAL_METHODS

    return LOCAL_METHODS


def plane_in_process(
    store: Path, method: str, params: Mapping[str, Any], environ: Mapping[str, str]
) -> Any:
    """A plane method answered here, when no daemon serves the store."""
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


def describe_gate(report: Mapping[str, Any]) -> str:
    from headd_client.local_gate import describe

    return describe(report)


def _to_plain(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


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
        from headd.memfile.check import main as check_main

        rest = argv[idx + 1 :]
        if "--json" in argv[:idx] and "--json" not in rest:
            rest = ["--json", *rest]
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            return int(check_main(rest) or 0)
    try:
        args = build_parser().parse_args(argv)
        store = resolve_store(args.store, environ)
        socket_path = resolve_socket(args.socket, store, environ)
        if getattr(args, "run_agent", None) is not None:
            return int(args.run_agent(args, store, socket_path, environ, stdin, stdout, stderr))
        method, params = _request_for(args, stdin)
    except UsageError as exc:
        print(f"ERR_USAGE: {exc}", file=stderr)
        return EXIT_USAGE
    params = {k: v for k, v in params.items() if v is not None}
    make = connect or (lambda path, timeout: Client(path, timeout=timeout))
    try:
        try:
            with progress(method, stderr), make(socket_path, args.timeout) as client:
                result = client.call(method, params)
            failure = describe_gate(result) if method == "gate" else ""
        except DaemonUnavailable:
            failure = ""
            if method == "gate":
                result, failure = gate_in_process(store, params)
            elif method in _local_methods():
                with progress(method, stderr):
                    result = plane_in_process(store, method, params, environ)
            else:
                raise
    except (HeaddError, RpcError) as exc:
        code = exc.code if isinstance(exc, HeaddError) else _rpc_name(exc)
        print(f"{code}: {_one_line(exc.message)}", file=stderr)
        return EXIT_USAGE if isinstance(exc, InvalidParams) else EXIT_FAILURE
    result = _to_plain(result)
    if args.command == "status" and args.memory:
        result = result.get("memory") or {}
    if args.json:
        stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        _human(method if method in ("search", "gate") else args.command, result, stdout)
    if method == "gate" and not result.get("passed", False):
        print(f"{DiscriminationFailed.code}: {_one_line(failure)}", file=stderr)
        return EXIT_FAILURE
    refusal = session_refusal(method, result)
    if refusal is not None:
        print(refusal, file=stderr)
        return EXIT_FAILURE
    return EXIT_OK


def session_refusal(method: str, result: Any) -> str | None:
    """The one failure line for a session write that did not happen, else None.

    ``session.apply`` with violations appended nothing, ``session.commit`` answered
    ``refused`` or ``rebase-needed``: answers, not errors, on the wire, but a script running
    ``headctl`` needs a non-zero exit to notice. Kinds are named, never file content.
    """
    if not isinstance(result, Mapping):
        return None
    violations = result.get("violations") or []
    kinds = ", ".join(sorted({str(v.get("kind")) for v in violations if isinstance(v, Mapping)}))
    if method == "session.apply" and violations:
        return f"{InvalidMemory.code}: apply refused, nothing appended ({kinds})"
    if method == "session.commit":
        outcome = result.get("outcome")
        if outcome == "refused":
            return f"{InvalidMemory.code}: commit refused ({kinds})"
        if outcome == "rebase-needed":
            overlapping = len(result.get("overlapping") or [])
            return (
                f"{WriteConflict.code}: the branch moved since the session's base "
                f"({overlapping} overlapping paths); run headctl session rebase"
            )
    return None


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


def _rpc_name(exc: RpcError) -> str:
    return {
        -32700: "ERR_PARSE",
        -32600: "ERR_INVALID_REQUEST",
        -32601: "ERR_METHOD_NOT_FOUND",
        -32602: "ERR_INVALID_PARAMS",
    }.get(exc.rpc_code, "ERR_INTERNAL")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    return run(
        sys.argv[1:] if argv is None else argv,
        environ=os.environ,
        stdin=sys.stdin,
        stdout=sys.stdout,
        stderr=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())
