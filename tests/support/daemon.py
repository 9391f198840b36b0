"""A real ``headd`` process, its socket, and ``headctl``, for the daemon, client and CLI tests.

The daemon is the real ``headd`` entry point in a subprocess, talked to over its real socket;
``headctl`` runs as the user runs it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from support.data import REPO

PYTHON = sys.executable


def short_socket_dir() -> Path:
    """A directory for sockets, in the system's temporary directory rather than pytest's deep
    ``tmp_path``, so socket paths stay under the 107-byte limit (removed at exit)."""
    path = Path(tempfile.mkdtemp(prefix="hd-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def request_line(method: str, params: object = None, request_id: object = 1) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message).encode() + b"\n"


class Daemon:
    """A real ``headd`` process serving ``store`` on ``socket_path``.

    Without an ``--embedder`` in ``extra`` it runs with ``--embedder off``: the default ``auto``
    would load the local model when installed, which tests must not pay for by accident.
    """

    def __init__(
        self,
        store: Path,
        socket_path: Path,
        *,
        extra: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.socket_path = socket_path
        self.log_path = socket_path.parent / f"headd-{os.getpid()}-{id(self)}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "headd.daemon.main",
                "--store",
                str(store),
                "--socket",
                str(socket_path),
                *(extra if "--embedder" in extra else [*extra, "--embedder", "off"]),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=str(REPO),
        )

    def wait_ready(self, timeout: float = 30.0) -> Daemon:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"headd exited {self.proc.returncode}:\n{self.log()}")
            with (
                contextlib.suppress(OSError),
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
            ):
                sock.settimeout(5)
                sock.connect(str(self.socket_path))
                sock.sendall(request_line("status"))
                if sock.recv(65536):
                    return self
            time.sleep(0.05)
        raise AssertionError(f"headd not ready in {timeout} s:\n{self.log()}")

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def connect(path: Path, timeout: float = 30.0) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(str(path))
    return sock


def read_line(sock: socket.socket, buffer: bytearray | None = None) -> bytes:
    """One answer line from a raw socket (without its newline); b"" on EOF."""
    buf = bytearray() if buffer is None else buffer
    while b"\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line


def wait_for(predicate: object, timeout: float = 5.0, interval: float = 0.01) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def headctl(
    *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "headd_client.headctl", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        cwd=str(REPO),
        timeout=120,
    )
