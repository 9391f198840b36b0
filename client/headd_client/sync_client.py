"""A blocking client over one Unix socket connection, for scripts and headctl.

One request at a time: ``call`` writes a line and reads until its answer arrives. Answers on one
connection come in request order (docs/protocol.md, "Framing"), so an answer with another id is a
protocol violation, not something to queue.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from headd.errors import DaemonUnavailable, ProtocolViolation
from headd_client.discovery import default_socket
from headd_client.protocol import Answer, ClientProtocol, unwrap

if TYPE_CHECKING:
    from headd_client import calls
    from headd_client.calls import Call, sync_method

READ_CHUNK = 256 * 1024

T = TypeVar("T")


class Client:
    """``Client().call("status")``; use as a context manager to close the connection.

    Without ``socket_path`` the client finds the socket of ``store`` (default ``$MEMHTML_ROOT``,
    else ``~/memhtml``) by itself, as ``headctl`` does (``headd_client.discovery``).
    """

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        store: str | os.PathLike[str] | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        self.socket_path = Path(socket_path) if socket_path is not None else default_socket(store)
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._protocol = ClientProtocol()
        self._ready: list[Answer | list[Answer]] = []

    # -- connection ---------------------------------------------------------------------

    def connect(self) -> Client:
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(os.fspath(self.socket_path))
            except OSError as exc:
                sock.close()
                raise DaemonUnavailable(
                    f"no daemon answers on {self.socket_path}: {exc.strerror or exc}",
                    {"socket": str(self.socket_path)},
                ) from None
            self._sock = sock
        return self

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Client:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- calls --------------------------------------------------------------------------

    def call(self, method: str, params: Mapping[str, object] | None = None, **kw: object) -> object:
        """Call ``method`` with ``params`` (or keyword params) and return its result."""
        merged = {**(params or {}), **kw}
        request_id, line = self._protocol.request(method, merged)
        self._send(line)
        answer = self._next()
        if isinstance(answer, list) or answer.id != request_id:
            raise ProtocolViolation(f"answer out of order for request {request_id}")
        return unwrap(answer)

    def notify(self, method: str, params: Mapping[str, object] | None = None, **kw: object) -> None:
        self._send(self._protocol.notification(method, {**(params or {}), **kw}))

    def run(self, call: Call[T]) -> T:
        """Run one typed call (``headd_client.calls``) and decode its answer into its type."""
        return call.decode(self.call(call.method, call.params))

    # The typed calls (``headd_client.calls``), one method each. Declared for the type checker
    # and made on first use (``__getattr__``): their types cost ``headctl`` a tenth of its start.
    if TYPE_CHECKING:
        status = sync_method(calls.status)
        search = sync_method(calls.search)
        read = sync_method(calls.read)
        skipped = sync_method(calls.skipped)
        resolve = sync_method(calls.resolve)
        inbound = sync_method(calls.inbound)
        by_entity = sync_method(calls.by_entity)
        by_frame_key = sync_method(calls.by_frame_key)
        by_content_hash = sync_method(calls.by_content_hash)
        advance = sync_method(calls.advance)
        vectors_fill = sync_method(calls.vectors_fill)
        session_open = sync_method(calls.session_open)
        session_apply = sync_method(calls.session_apply)
        session_commit = sync_method(calls.session_commit)
        session_rebase = sync_method(calls.session_rebase)
        session_close = sync_method(calls.session_close)
        session_list = sync_method(calls.session_list)
        recall = sync_method(calls.recall)
        index_search = sync_method(calls.index_search)
        index_status = sync_method(calls.index_status)
        traces_search = sync_method(calls.traces_search)
        traces_show = sync_method(calls.traces_show)
        sync = sync_method(calls.sync)

    if not TYPE_CHECKING:  # the checker reads the declarations above, not this

        def __getattr__(self, name: str) -> object:
            if name.startswith("_"):
                raise AttributeError(name)
            from headd_client import calls

            if name not in calls.TYPED_CALLS:
                raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
            method = calls.sync_method(getattr(calls, name))
            return method.__get__(self, type(self))

    def batch(self, calls: list[tuple[str, Mapping[str, object] | None]]) -> list[Answer]:
        """Send one batch; the answers in request order (raise nothing: inspect each)."""
        ids, line = self._protocol.batch(calls)
        self._send(line)
        answers = self._next()
        if not isinstance(answers, list):
            answers = [answers]
        by_id = {a.id: a for a in answers}
        return [by_id[i] for i in ids if i in by_id]

    def _send(self, line: bytes) -> None:
        sock = self.connect()._sock
        assert sock is not None
        try:
            sock.sendall(line)
        except OSError as exc:
            self.close()
            raise DaemonUnavailable(f"daemon went away: {exc.strerror or exc}") from None

    def _next(self) -> Answer | list[Answer]:
        while not self._ready:
            sock = self._sock
            if sock is None:
                raise DaemonUnavailable("not connected")
            try:
                data = sock.recv(READ_CHUNK)
            except TimeoutError:
                self.close()
                raise DaemonUnavailable(f"no answer within {self.timeout} s") from None
            except OSError as exc:
                self.close()
                raise DaemonUnavailable(f"daemon went away: {exc.strerror or exc}") from None
            if not data:
                self.close()
                raise DaemonUnavailable("daemon closed the connection")
            self._ready.extend(self._protocol.receive(data))
        return self._ready.pop(0)
