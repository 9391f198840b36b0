"""The daemon's configuration: its command line and environment, resolved into one :class:`Config`.

Flags win over the environment, which wins over the defaults: the store is ``--store``, else
``$MEMHTML_ROOT``, else ``~/memhtml``; the socket ``--socket``, else ``$HEADD_SOCKET``, else
``<store>/.memhtml/head.sock``; the embedder ``--embedder``, else ``$HEADD_EMBEDDER``, else
``auto``; the transcripts ``--trace-root``, else ``$MEMHTML_TRACE_ROOT``, else ``~/.claude``.
The remote to follow is ``--remote``, else ``$HEADD_REMOTE``, else none; it is fetched every
``--fetch-interval`` seconds (30 by default), and each git fetch or push is killed after
``--remote-timeout`` seconds (60 by default). The log level is ``--log-level``, else
``$HEADD_LOG_LEVEL``, else INFO. Parsing imports nothing of the daemon itself, so a usage error
answers at once (exit 2).
"""

from __future__ import annotations

import argparse
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from headd import installed_version
from headd.daemon.usage import LOG_LEVELS, UsageParser
from headd.wire.framing import DEFAULT_LINE_LIMIT

FOLLOW_INTERVAL_S = 0.02
DEFAULT_SNAPSHOT_INTERVAL_S = 30.0
DEFAULT_FETCH_INTERVAL_S = 30.0
#: ``headd.remote.transport.DEFAULT_TIMEOUT``, repeated so parsing imports nothing of the daemon.
DEFAULT_REMOTE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Config:
    """Everything the daemon is told at start, with every default applied."""

    store: Path
    socket: Path
    ref: str | None
    embedder: str
    trace_root: Path
    line_limit: int
    drain_timeout: float
    follow_interval: float
    #: Seconds between two head snapshot writes; negative: no snapshots (load from git only).
    snapshot_interval: float = DEFAULT_SNAPSHOT_INTERVAL_S
    #: The git remote whose ``<remote>/<branch>`` the branch follows (``--remote``), if any.
    remote: str | None = None
    #: Seconds between two fetches of that remote.
    fetch_interval: float = DEFAULT_FETCH_INTERVAL_S
    #: Seconds one git fetch or push may take before it is killed with what it started.
    remote_timeout: float = DEFAULT_REMOTE_TIMEOUT_S


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="headd", description="Serve a memhtml store's head over a Unix socket (JSON-RPC)."
    )
    parser.add_argument(
        "--store", metavar="PATH", help="the store (default $MEMHTML_ROOT, else ~/memhtml)"
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="socket path (default $HEADD_SOCKET, else <store>/.memhtml/head.sock)",
    )
    parser.add_argument(
        "--ref", metavar="REF", help="the branch to follow (default: the branch HEAD names)"
    )
    parser.add_argument(
        "--embedder",
        metavar="NAME",
        help="auto (the local model when the embed extra is installed, else none), off, hash "
        "(deterministic, for tests) or a model name (default $HEADD_EMBEDDER, else auto)",
    )
    parser.add_argument(
        "--trace-root",
        metavar="DIR",
        help="transcripts root (default $MEMHTML_TRACE_ROOT, else ~/.claude)",
    )
    parser.add_argument(
        "--line-limit", type=int, default=DEFAULT_LINE_LIMIT, help=argparse.SUPPRESS
    )
    parser.add_argument("--drain-timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--follow-interval", type=float, default=FOLLOW_INTERVAL_S, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--snapshot-interval",
        type=float,
        default=DEFAULT_SNAPSHOT_INTERVAL_S,
        metavar="SECONDS",
        help="seconds between head snapshot writes (negative: no snapshots; default 30)",
    )
    parser.add_argument(
        "--remote",
        metavar="NAME",
        help="follow this git remote: fetch, fast-forward, push, replay (default $HEADD_REMOTE)",
    )
    parser.add_argument(
        "--fetch-interval",
        type=float,
        metavar="SECONDS",
        help=f"seconds between two fetches of the remote (default {DEFAULT_FETCH_INTERVAL_S:g})",
    )
    parser.add_argument(
        "--remote-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds one git fetch or push may take before it is killed "
        f"(default {DEFAULT_REMOTE_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--log-level",
        metavar="LEVEL",
        help=f"{', '.join(LOG_LEVELS)} (default $HEADD_LOG_LEVEL, else INFO)",
    )
    parser.add_argument("--version", action="version", version=f"headd {installed_version()}")
    return parser


def config_from(args: argparse.Namespace, environ: MutableMapping[str, str]) -> Config:
    """The configuration the parsed flags and the environment give (flags first)."""
    from headd.embed.factory import embedder_setting
    from headd.wire.socket_path import resolve_socket, resolve_store

    store = resolve_store(args.store, environ)
    home = Path(environ.get("HOME") or str(Path.home()))
    trace_root = args.trace_root or environ.get("MEMHTML_TRACE_ROOT") or str(home / ".claude")
    return Config(
        store=store,
        socket=resolve_socket(args.socket, store, environ),
        ref=args.ref,
        embedder=embedder_setting(args.embedder, environ),
        trace_root=Path(trace_root).expanduser(),
        line_limit=args.line_limit,
        drain_timeout=args.drain_timeout,
        follow_interval=args.follow_interval,
        snapshot_interval=args.snapshot_interval,
        remote=args.remote or environ.get("HEADD_REMOTE") or None,
        fetch_interval=args.fetch_interval
        if args.fetch_interval is not None
        else DEFAULT_FETCH_INTERVAL_S,
        remote_timeout=args.remote_timeout
        if args.remote_timeout is not None and args.remote_timeout > 0
        else DEFAULT_REMOTE_TIMEOUT_S,
    )
