"""The bridge's way to the daemon: connect, start one when none answers, reconnect after a restart.

An agent spawns ``headctl mcp`` at every session start and expects memory to be there, so when no
daemon answers on the store's socket the bridge starts ``headd --store S`` itself: detached (its
own session, stdin from /dev/null, output appended to ``<store>/.memhtml/headd/daemon.log``), then
waits for the socket to answer. Two bridges racing to start one are harmless: the daemon refuses
to start when another answers on its socket, and both bridges then connect to the winner.
``--no-spawn`` turns the start off, and a missing daemon is then ``ERR_DAEMON_UNAVAILABLE``.

A call that finds the connection gone (the daemon restarted, or was killed) reconnects once, and
spawns again when allowed, before it reports ``ERR_DAEMON_UNAVAILABLE``: a write is retried only
when it cannot have reached the daemon, which the caller decides (``idempotent``).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from headd.errors import DaemonUnavailable
from headd_client.protocol import Answer, unwrap
from headd_client.store_check import store_problem
from headd_client.sync_client import Client

if TYPE_CHECKING:
    from headd_client.calls import Call

T = TypeVar("T")
U = TypeVar("U")

log = logging.getLogger(__name__)

#: How long a spawned daemon may take to answer (a cold load of a large store).
SPAWN_WAIT_S = 60.0
POLL_S = 0.05


def daemon_log_path(store: Path) -> Path:
    return store / ".memhtml" / "headd" / "daemon.log"


def spawn_daemon(
    store: Path, socket_path: Path, environ: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """Start ``headd`` for ``store`` detached from this process; its output goes to its log."""
    log_path = daemon_log_path(store)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "headd.daemon.main", "--store", str(store)]
    command += ["--socket", str(socket_path)]
    with open(log_path, "ab") as out, open(os.devnull, "rb") as devnull:
        proc = subprocess.Popen(
            command,
            stdin=devnull,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(environ),
            cwd=str(store),
            start_new_session=True,
            close_fds=True,
        )
    log.info("started headd (pid %d) for %s; log %s", proc.pid, store, log_path)
    return proc


def wait_for_socket(
    socket_path: Path, proc: subprocess.Popen[bytes] | None, timeout: float = SPAWN_WAIT_S
) -> Client:
    """A connected client once the daemon answers ``status``; DaemonUnavailable after ``timeout``
    or when the spawned daemon exits without answering (another one may have won the race)."""
    deadline = time.monotonic() + timeout
    while True:
        client = Client(socket_path, timeout=30.0)
        try:
            client.connect()
            client.call("status")
            return client
        except DaemonUnavailable:
            client.close()
        if proc is not None and proc.poll() is not None:
            proc = None  # it exited (maybe refused: another daemon serves); keep probing briefly
            deadline = min(deadline, time.monotonic() + 2.0)
        if time.monotonic() >= deadline:
            raise DaemonUnavailable(
                f"no daemon answers on {socket_path}", {"socket": str(socket_path)}
            )
        time.sleep(POLL_S)


class DaemonLink:
    """One connection to the store's daemon, made (and remade) on demand."""

    def __init__(
        self,
        store: Path,
        socket_path: Path,
        *,
        spawn: bool = True,
        environ: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.store = store
        self.socket_path = socket_path
        self.spawn = spawn
        self.environ = dict(os.environ if environ is None else environ)
        self.timeout = timeout
        self._client: Client | None = None
        self.spawned: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def client(self) -> Client:
        with self._lock:
            return self._connect()

    def _connect(self) -> Client:
        if self._client is not None:
            return self._client
        client = Client(self.socket_path, timeout=self.timeout)
        try:
            client.connect()
        except DaemonUnavailable:
            if not self.spawn:
                raise DaemonUnavailable(
                    f"no daemon answers on {self.socket_path} and --no-spawn is set",
                    {"socket": str(self.socket_path)},
                ) from None
            problem = store_problem(self.store)
            if problem is not None:  # start nothing and create nothing at a path that is no store
                raise DaemonUnavailable(problem, {"store": str(self.store)}) from None
            self.spawned = spawn_daemon(self.store, self.socket_path, self.environ)
            client = wait_for_socket(self.socket_path, self.spawned)
            client.timeout = self.timeout
        self._client = client
        return client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def call(
        self, method: str, params: Mapping[str, object] | None = None, *, idempotent: bool = True
    ) -> Any:
        """One call; a dropped connection is remade once (and the daemon respawned) when the
        call is safe to repeat. Its answer is the decoded JSON, untyped: the bridge reads the
        daemon through :meth:`run`, and this door stays for the methods that have no typed call."""
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            return self.client().call(method, clean)
        except DaemonUnavailable:
            self.close()
            if not idempotent:
                raise
        return self.client().call(method, clean)

    def run(self, call: Call[T], *, idempotent: bool = True) -> T:
        """One typed call (``headd_client.calls``), its answer decoded into the call's type; a
        write passes ``idempotent=False`` (see :meth:`call`)."""
        return call.decode(self.call(call.method, call.params, idempotent=idempotent))

    def batch(self, calls: list[tuple[str, Mapping[str, object] | None]]) -> list[Answer]:
        """Many idempotent reads in one round trip; each answer is checked by the caller."""
        clean: list[tuple[str, Mapping[str, object] | None]] = [
            (m, {k: v for k, v in (p or {}).items() if v is not None}) for m, p in calls
        ]
        try:
            return self.client().batch(clean)
        except DaemonUnavailable:
            self.close()
        return self.client().batch(clean)

    def batch_run(self, first: Call[T], second: Call[U]) -> tuple[T, U]:
        """Two typed reads in one round trip, each answer decoded into its call's type."""
        one, two = self.batch([(first.method, first.params), (second.method, second.params)])
        return first.decode(unwrap(one)), second.decode(unwrap(two))
