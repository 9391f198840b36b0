"""Helpers for the daemon, client and headctl tests: a small real store and a real daemon process.

The store is a real git repository with a work tree, built with pygit2 from memory files written
in the format memhtml's writer produces; external commits go through the ``git`` command, as a
person's would. The daemon is the real ``headd`` entry point in a subprocess, talked to over its
real socket.
"""

from __future__ import annotations

import atexit
import contextlib
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

import pygit2

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def memory_html(
    title: str,
    claim: str,
    *,
    memory_type: str = "semantic",
    rest: str = "",
    entities: Sequence[str] = (),
    links: Sequence[tuple[str, str]] = (),
    status: str = "active",
    created: str = "2026-11-01T09:00:00Z",
    extra_meta: Sequence[tuple[str, str]] = (),
) -> str:
    """A memory file as memhtml's template lays it out."""
    head = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{title}</title>",
        f'<meta name="memhtml-type" content="{memory_type}">',
        f'<meta name="memhtml-status" content="{status}">',
        f'<meta name="memhtml-created" content="{created}">',
        f'<meta name="memhtml-updated" content="{created}">',
    ]
    head += [f'<meta name="memhtml-{name}" content="{value}">' for name, value in extra_meta]
    head += [f'<meta name="memhtml-entity" content="{entity}">' for entity in entities]
    head += [f'<link rel="memhtml-{rel.replace("_", "-")}" href="{href}">' for rel, href in links]
    body = [
        "</head>",
        "<body>",
        "<article>",
        f"<p><mark>{claim}</mark>{(' ' + rest) if rest else ''}</p>",
        "</article>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(head + body)


#: A small corpus: distinct words per file so searches have one clear winner.
BASE_FILES: dict[str, str] = {
    "areas/inbox/postgres-is-the-system-of-record.html": memory_html(
        "Postgres is the system of record",
        "Postgres is the system of record for orders.",
        rest="Replicas serve reads only.",
        entities=("service:checkout-api",),
    ),
    "areas/inbox/user-prefers-short-answers.html": memory_html(
        "User prefers short answers",
        "The user prefers short answers with the command first.",
        memory_type="user_preference",
        entities=("person:dana",),
    ),
    "resources/database/connection-pool-size-is-forty.html": memory_html(
        "Connection pool size is forty",
        "The connection pool size is forty per pod.",
        rest="Raised from twenty after the November outage.",
        entities=("service:checkout-api",),
        links=(("relates_to", "/areas/inbox/postgres-is-the-system-of-record.html"),),
    ),
    "projects/search-platform/shard-count-is-eight.html": memory_html(
        "Shard count is eight",
        "The search cluster runs eight shards.",
        entities=("project:search-platform",),
    ),
    "areas/inbox/deploys-run-through-the-release-train.html": memory_html(
        "Deploys run through the release train",
        "Deploys run through the weekly release train.",
    ),
    "areas/inbox/broken-memory.html": "<!doctype html><html><head><title>x</title></head>"
    "<body><p>no article here</p></body></html>\n",
}


def _signature() -> pygit2.Signature:
    return pygit2.Signature("Test Author", "test@example.com", 1_764_000_000, 0)


def make_store(root: Path, files: Mapping[str, str] = BASE_FILES) -> str:
    """A non-bare repository on ``main`` at ``root`` with ``files`` committed; returns the sha."""
    repo = pygit2.init_repository(str(root), bare=False, initial_head="main")
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (root / ".gitignore").write_text("/.memhtml/\n", encoding="utf-8")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sha = repo.create_commit("refs/heads/main", _signature(), _signature(), "seed", tree, [])
    return str(sha)


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ext",
        "GIT_AUTHOR_EMAIL": "ext@example.com",
        "GIT_COMMITTER_NAME": "Ext",
        "GIT_COMMITTER_EMAIL": "ext@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def external_commit(root: Path, files: Mapping[str, str], message: str = "external") -> str:
    """Write files into the work tree and ``git commit`` them, as a person would."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def short_socket_dir() -> Path:
    """A directory for sockets whose paths stay well under 107 bytes (removed at exit)."""
    path = Path(tempfile.mkdtemp(prefix="hd-", dir="/tmp"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def request_line(method: str, params: object = None, request_id: object = 1) -> bytes:
    import json

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
