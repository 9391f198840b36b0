"""The agent-facing commands of ``headctl``: ``mcp``, ``integrations`` and ``hook``.

``headctl`` registers them with one call (``register``) and runs whichever was chosen through
the ``run_agent`` default its subparsers set, so these commands own their output and exit status
and the rest of ``headctl`` stays a thin method-call wrapper.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from headd_client.headctl_commands import Subparsers

HOOK_EVENTS = ("session-start", "prompt-submit", "pre-compact", "session-end")
CLIENTS = ("claude", "codex", "cursor")


def register(sub: Subparsers, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``mcp``, ``integrations`` and ``hook`` to ``headctl``'s subcommands."""
    p = sub.add_parser("mcp", help="a stdio MCP server answering from the store's daemon")
    p.add_argument("--no-spawn", action="store_true", help="fail instead of starting a daemon")
    p.set_defaults(run_agent=_run_mcp)

    p = sub.add_parser("integrations", help="connect a coding agent (MCP entry, hooks, notes)")
    ss = p.add_subparsers(dest="integrations_command", required=True, parser_class=parser_class)
    for action, what in (("install", "write"), ("uninstall", "remove")):
        q = ss.add_parser(action, help=f"{what} the agent's MCP entry, hooks and notes")
        q.add_argument("client", choices=CLIENTS, help=f"the agent: {', '.join(CLIENTS)}")
        q.add_argument(
            "--scope",
            choices=("user", "project"),
            default="user",
            help="the user's configuration (default) or one project's",
        )
        q.add_argument("--project-root", help="the project for --scope project (default: cwd)")
        q.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
        q.set_defaults(run_agent=_run_integrations)
    q = ss.add_parser("doctor", help="check each piece an install wrote")
    q.add_argument("client", nargs="?", choices=CLIENTS, help="one agent (default: all three)")
    q.add_argument(
        "--scope", choices=("user", "project"), default=None, help="one scope (default: both)"
    )
    q.add_argument("--project-root", help="the project for --scope project (default: cwd)")
    q.set_defaults(run_agent=_run_integrations)

    p = sub.add_parser("hook", help="a Claude Code hook (reads its JSON on stdin)")
    p.add_argument("event", choices=HOOK_EVENTS, help=f"the hook event: {', '.join(HOOK_EVENTS)}")
    p.add_argument(
        "--limit", type=int, default=5, help="at most N memories in what it injects (default 5)"
    )
    p.set_defaults(run_agent=_run_hook)


def _run_mcp(
    args: argparse.Namespace,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    from headd_client.mcp.server import run_mcp

    return run_mcp(store, socket_path, spawn=not args.no_spawn, environ=dict(environ))


def _run_integrations(
    args: argparse.Namespace,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    from headd_client.integrations.commands import run_integrations

    return run_integrations(args, store, socket_path, environ, stdout, stderr)


def _run_hook(
    args: argparse.Namespace,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    from headd_client.integrations.hooks import run_hook

    return run_hook(args.event, store, socket_path, environ, stdin, stdout, limit=args.limit)
