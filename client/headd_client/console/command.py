"""``headctl ui [--port P] [--no-open]``: its options and its run, without importing the web stack.

``headctl_commands`` registers them as one command; this module imports nothing of ``headctl``
(the context is read by its fields), so the two never import each other.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Protocol, TextIO

DEFAULT_PORT = 8731
HELP = "serve the web console for this store on loopback and print its URL"


class UiContext(Protocol):
    """The part of ``headctl``'s context the console needs."""

    @property
    def store(self) -> Path: ...
    @property
    def socket(self) -> Path: ...
    @property
    def stdout(self) -> TextIO: ...
    @property
    def stderr(self) -> TextIO: ...


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the loopback port to serve on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument("--no-open", action="store_true", help="print the URL, do not open a browser")


def run(args: argparse.Namespace, ctx: UiContext) -> int:
    from headd_client.console.serve import run as serve

    return serve(args, ctx.store, ctx.socket, ctx.stdout, ctx.stderr)
