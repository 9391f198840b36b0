"""``headctl ui``: serve the console on loopback, print its URL once, open the browser.

The server is uvicorn on ``127.0.0.1`` only (never a wildcard address); port 0 asks the system
for a free port, whose number the printed URL then carries. The daemon is reached through a
``DaemonLink``, which starts one for the store when none answers, as ``headctl mcp`` does.
"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import webbrowser
from pathlib import Path
from typing import TextIO

import uvicorn

from headd_client.console.app import Console, build_app
from headd_client.console.security import Secret
from headd_client.mcp.spawn import DaemonLink

HOST = "127.0.0.1"

log = logging.getLogger(__name__)


def bind(port: int) -> socket.socket:
    """A listening loopback socket on ``port`` (0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


class ConsoleServer:
    """The console on a bound socket; ``serve`` blocks, ``stop`` ends it from another thread."""

    def __init__(self, store: Path, socket_path: Path, port: int, *, spawn: bool = True) -> None:
        self.sock = bind(port)
        self.port = int(self.sock.getsockname()[1])
        self.secret = Secret(self.port)
        self.link = DaemonLink(store, socket_path, spawn=spawn)
        console = Console(store, self.link, self.secret, threading.Lock())
        config = uvicorn.Config(
            build_app(console),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            proxy_headers=False,
        )
        self.server = uvicorn.Server(config)

    @property
    def url(self) -> str:
        return self.secret.url()

    def serve(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        finally:
            self.link.close()
            self.sock.close()

    def stop(self) -> None:
        self.server.should_exit = True


def run(
    args: argparse.Namespace, store: Path, socket_path: Path, stdout: TextIO, stderr: TextIO
) -> int:
    """Serve until interrupted; 1, with one line on ``stderr``, when the port cannot be had."""
    try:
        server = ConsoleServer(store, socket_path, args.port)
    except OSError as exc:
        stderr.write(
            f"headctl ui: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}"
            " (--port 0 picks a free one)\n"
        )
        return 1
    stdout.write(f"{server.url}\n")
    stdout.flush()
    if not args.no_open:
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    server.serve()
    return 0
