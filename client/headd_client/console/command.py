"""``headctl ui [--port P] [--no-open]``, registered without importing the web stack."""

from __future__ import annotations

import argparse

from headd_client.headctl_commands import Command, Context, register

DEFAULT_PORT = 8731


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the loopback port to serve on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument("--no-open", action="store_true", help="print the URL, do not open a browser")


def _run(args: argparse.Namespace, ctx: Context) -> int:
    from headd_client.console.serve import run

    return run(args, ctx.store, ctx.socket, ctx.stdout)


def register_ui() -> None:
    register(
        Command(
            ("ui",),
            "serve the web console for this store on loopback and print its URL",
            arguments=_arguments,
            local=_run,
        )
    )
