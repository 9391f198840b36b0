"""``headctl import``, ``headctl forget`` and ``headctl doctor --secrets``: commands that own
their output, added to ``headctl`` with one parser hook (``register``).

An import goes through the daemon when one serves the store (its sessions, so the daemon's
version follows each commit at once), else through a session manager in this process; either way
the same session methods land it. ``doctor_secrets`` is a function of its own, so a general
``headctl doctor`` can run it for ``--secrets``; ``register`` adds ``doctor`` only when no other
module has.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import msgspec

from headd.errors import DaemonUnavailable, HeaddError
from headd_client.json_types import JsonObject

if TYPE_CHECKING:
    from headd.head.indexes import IndexedView
    from headd.importers.run import Report, Sink
    from headd_client.headctl_commands import Subparsers

DISABLE_AUTO_MEMORY = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"


def register(sub: Subparsers, parser_class: type[argparse.ArgumentParser]) -> None:
    from headd.importers.sources import SOURCES

    p = sub.add_parser("import", help="bring memories kept by another tool into the store")
    p.add_argument(
        "source",
        choices=sorted(SOURCES),
        help="; ".join(f"{name}: {s.help}" for name, s in sorted(SOURCES.items())),
    )
    p.add_argument("path", nargs="?", help="where the source keeps them (default: its own place)")
    p.add_argument(
        "--dry-run", action="store_true", help="say what would be written; write nothing"
    )
    p.add_argument("--workspace", metavar="W", help="file every memory under projects/W")
    p.set_defaults(run_agent=_agent(_run_import))

    p = sub.add_parser("forget", help="remove a memory from the whole history, for good")
    p.add_argument("path", help="the memory's path (areas/inbox/x.html)")
    p.add_argument(
        "--push", action="store_true", help="also rewrite the remote's branch, with a lease"
    )
    p.set_defaults(run_agent=_agent(_run_forget))

    if "doctor" not in getattr(sub, "choices", {}):
        p = sub.add_parser("doctor", help="check the store")
        p.add_argument(
            "--secrets", action="store_true", help="scan every blob ever committed for credentials"
        )
        p.set_defaults(run_agent=_agent(_run_doctor))


Runner = Callable[[argparse.Namespace, Path, Path, TextIO, TextIO], int]


def _agent(runner: Runner) -> Callable[..., int]:
    """``runner`` as ``headctl`` calls a hooked command: with the environment and stdin too,
    which these commands do not read."""

    def run(
        args: argparse.Namespace,
        store: Path,
        socket: Path,
        _environ: Mapping[str, str],
        _stdin: TextIO,
        stdout: TextIO,
        stderr: TextIO,
    ) -> int:
        return runner(args, store, socket, stdout, stderr)

    return run


# -- where the session methods run --------------------------------------------------------


class LocalSink:
    """The session methods on a ``SessionManager`` in this process, answered as the wire would
    answer them (plain dicts), for an import when no daemon serves the store."""

    def __init__(self, store: Path) -> None:
        from headd.store.manager import SessionManager

        self.manager = SessionManager(store)

    def _view(self) -> IndexedView | None:
        from headd.head.indexes import IndexedView
        from headd.store import git_io

        repo = git_io.open_repo(self.manager.store)
        sha = git_io.resolve_ref(repo, self.manager.ref)
        if sha is None:
            return None
        view = self.manager.versions.version(sha)
        assert isinstance(view, IndexedView)  # the store's versions are the head's
        return view

    def call(self, method: str, params: Mapping[str, object]) -> object:
        """``params`` decoded into the wire's request for ``method``, as the daemon decodes
        them, and the answer as its plain JSON."""
        from headd.wire import methods
        from headd.wire.answers import wire_record_or_none

        m = self.manager
        match method:
            case "session.open":
                return msgspec.to_builtins(m.open())
            case "session.apply":
                apply = msgspec.convert(params, methods.SessionApply)
                return msgspec.to_builtins(m.apply(apply.session, apply.ops))
            case "session.commit":
                commit = msgspec.convert(params, methods.SessionCommit)
                return msgspec.to_builtins(m.commit(commit.session, commit.message))
            case "session.close":
                close = msgspec.convert(params, methods.SessionClose)
                return msgspec.to_builtins(m.close(close.session))
            case "by_entity":
                entity = msgspec.convert(params, methods.ByEntity).entity
                view = self._view()
                return {"paths": [] if view is None else list(view.by_entity(entity))}
            case "read":
                path = msgspec.convert(params, methods.Read).path
                view = self._view()
                record = None if view is None else view.record(path)
                return {"record": msgspec.to_builtins(wire_record_or_none(record))}
        raise ValueError(f"no local answer for {method}")


@contextlib.contextmanager
def sink_for(store: Path, socket: Path) -> Iterator[Sink]:
    from headd_client.sync_client import Client

    client = Client(socket, timeout=600)
    try:
        client.connect()
    except DaemonUnavailable:
        yield LocalSink(store)
        return
    with client:
        yield client


# -- import -------------------------------------------------------------------------------


def _run_import(
    args: argparse.Namespace, store: Path, socket: Path, stdout: TextIO, stderr: TextIO
) -> int:
    from headd.importers.run import run_import
    from headd.importers.sources import SOURCES

    source = SOURCES[args.source]
    root = Path(args.path).expanduser() if args.path else source.default()
    if not root.exists():
        return _fail(args, stdout, stderr, "ERR_USAGE", f"nothing to import at {root}", 2)
    parsed = source.parse(root)
    try:
        with sink_for(store, socket) as sink:
            report = run_import(
                parsed,
                sink,
                source=args.source,
                now=datetime.now(UTC),
                dry_run=args.dry_run,
                workspace=args.workspace,
            )
    except HeaddError as exc:
        return _fail(args, stdout, stderr, exc.code, exc.message, 1)
    out: JsonObject = report.to_json()
    advice = (
        f"Claude Code keeps writing its own auto memory beside headd's; to stop it, set "
        f"{DISABLE_AUTO_MEMORY}=1 in its environment (for example in ~/.claude/settings.json "
        f'under "env"). headctl did not change it.'
        if args.source == "claude-code" and not args.dry_run
        else None
    )
    if advice is not None:
        out["advice"] = advice
    if args.json:
        stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    else:
        _show_import(report, stdout)
    if advice is not None:
        print(advice, file=stderr)
    return 0


def _show_import(report: Report, out: TextIO) -> None:
    verb = "would write" if report.dry_run else "wrote"
    types = ", ".join(f"{n} {t}" for t, n in sorted(report.types.items())) or "nothing"
    print(
        f"{report.source}: {verb} {report.new} new, {report.corrected} corrected "
        f"({types}); {report.unchanged} unchanged, {report.deduped} already held, "
        f"{len(report.skipped)} skipped",
        file=out,
    )
    for title in report.titles:
        print(f"  + {title}", file=out)
    if not report.dry_run:
        print(f"  {report.links} links, {len(report.commits)} commits", file=out)
    for skipped in report.skipped:
        print(f"  skipped {skipped.what}: {skipped.reason}", file=out)
    for source, target in report.broken_links:
        print(f"  broken link in {source}: [[{target}]]", file=out)


def _fail(
    args: argparse.Namespace, stdout: TextIO, stderr: TextIO, code: str, message: str, status: int
) -> int:
    if getattr(args, "json", False):
        stdout.write(json.dumps({"error": {"code": code, "message": message}}) + "\n")
    print(f"{code}: {message}", file=stderr)
    return status


# -- forget and doctor --secrets ------------------------------------------------------------


def _run_forget(
    args: argparse.Namespace, store: Path, socket: Path, stdout: TextIO, stderr: TextIO
) -> int:
    """``headctl forget PATH [--push]``: the history rewritten without the memory."""
    from headd.secrets.forget import forget

    try:
        report = forget(store, args.path, push=args.push)
    except HeaddError as exc:
        return _fail(args, stdout, stderr, exc.code, exc.message, 1)
    if args.json:
        stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        print(
            f"forgot {', '.join(report.paths)}: {report.rewritten_commits} commits rewritten "
            f"on {', '.join(report.rewritten_refs) or 'no branch'}; dropped "
            f"{', '.join(report.dropped_refs) or 'no other ref'}; objects pruned",
            file=stdout,
        )
    for line in report.advice:
        print(line, file=stderr)
    return 0


def _run_doctor(
    args: argparse.Namespace, store: Path, socket: Path, stdout: TextIO, stderr: TextIO
) -> int:
    if not args.secrets:
        return _fail(args, stdout, stderr, "ERR_USAGE", "doctor needs --secrets", 2)
    return doctor_secrets(store, stdout, stderr, as_json=args.json)


def doctor_secrets(store: Path, stdout: TextIO, stderr: TextIO, *, as_json: bool) -> int:
    """``headctl doctor --secrets``: every credential in every blob any commit of any ref ever
    held, with the commits that hold it; exit 1 when there is one."""
    from headd.secrets.history import scan_history

    try:
        found = scan_history(store)
    except HeaddError as exc:
        print(f"{exc.code}: {exc.message}", file=stderr)
        return 1
    if as_json:
        stdout.write(json.dumps({"findings": [f.to_json() for f in found]}) + "\n")
    elif not found:
        print("no credentials in any commit of any ref", file=stdout)
    for f in [] if as_json else found:
        commits = ", ".join(c[:12] for c in f.commits[:5])
        more = f" and {len(f.commits) - 5} more" if len(f.commits) > 5 else ""
        print(
            f"{f.path}:{f.line}:{f.column}: {f.kind} in blob {f.blob[:12]}, "
            f"held by {len(f.commits)} commits ({commits}{more}); "
            f"remove it with: headctl forget {f.path}",
            file=stdout,
        )
    return 1 if found else 0
