"""The socket server: one read loop per connection, answers in order, a graceful stop.

Each connection is served by one coroutine that reads, frames
(``headd.wire.framing.LineFramer``), answers each line through ``json_rpc.answer_line`` and
writes the answer before it reads the next line, so a connection's answers come in request order
and a client that pipelines is throttled by the socket's own buffers. Many connections run at once on the event loop.

Who may talk to us: the socket file is 0600, and on top of that each peer's uid is read with
SO_PEERCRED and a peer of another uid is refused (root excepted), because a socket activated by
systemd, or a socket path in a shared directory, may be reachable by others.

Stopping (SIGTERM): stop accepting, let the requests already being answered finish (bounded by
``drain_timeout``), close every connection, remove the socket file if we created it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path

from headd.daemon.json_rpc import Dispatch, answer_line, error_line
from headd.errors import InvalidRequest
from headd.wire.framing import DEFAULT_LINE_LIMIT, LineFramer, Oversized, frame
from headd.wire.socket_path import peer_uid

log = logging.getLogger(__name__)

READ_CHUNK = 256 * 1024


class Server:
    """Serve ``dispatch`` on a listening socket until ``stop()``."""

    def __init__(
        self,
        listener: socket.socket,
        dispatch: Dispatch,
        *,
        owned_path: Path | None,
        line_limit: int = DEFAULT_LINE_LIMIT,
        drain_timeout: float = 10.0,
        allowed_uids: frozenset[int] | None = None,
    ) -> None:
        self._listener = listener
        self._dispatch = dispatch
        self._owned_path = owned_path
        self._line_limit = line_limit
        self._drain_timeout = drain_timeout
        self._allowed_uids = (
            allowed_uids if allowed_uids is not None else frozenset({os.getuid(), 0})
        )
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False
        self.requests = 0
        self.connections = 0

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve_connection, sock=self._listener, limit=READ_CHUNK
        )
        log.info("listening on %s", self._owned_path or "an inherited socket")

    async def stop(self) -> None:
        """Stop accepting, finish in-flight requests (bounded), close, remove our socket."""
        self._stopping = True
        if self._server is not None:
            self._server.close()
        log.info("stopped accepting; %d requests in flight", self._in_flight)
        try:
            await asyncio.wait_for(self._idle.wait(), self._drain_timeout)
        except TimeoutError:
            log.warning(
                "%d requests still running after %.1f s; closing",
                self._in_flight,
                self._drain_timeout,
            )
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        self._remove_socket()

    def _remove_socket(self) -> None:
        if self._owned_path is None:
            return
        try:
            os.unlink(self._owned_path)
            log.info("removed socket %s", self._owned_path)
        except FileNotFoundError:
            pass

    def _peer_allowed(self, writer: asyncio.StreamWriter) -> bool:
        sock = writer.get_extra_info("socket")
        if sock is None:
            return True
        try:
            uid = peer_uid(sock)
        except OSError:
            return False
        if uid is None or uid in self._allowed_uids:
            return True
        log.warning("refused a peer of uid %d", uid)
        return False

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self._stopping or not self._peer_allowed(writer):
            writer.close()
            return
        self.connections += 1
        self._writers.add(writer)
        framer = LineFramer(self._line_limit)
        try:
            while not self._stopping:
                data = await reader.read(READ_CHUNK)
                if not data:
                    break
                for item in framer.feed(data):
                    if isinstance(item, Oversized):
                        message = f"line exceeds the {item.limit}-byte limit; closing"
                        writer.write(
                            frame(error_line(InvalidRequest(message, {"limit": item.limit})))
                        )
                        await writer.drain()
                        return
                    if not item.strip():
                        continue
                    await self._answer(item, writer)
                    if self._stopping:
                        return
        except (ConnectionError, BrokenPipeError) as exc:
            log.debug("client went away: %s", exc)
        except asyncio.CancelledError:
            log.debug("connection closed while an answer was being written")
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, line: bytes, writer: asyncio.StreamWriter) -> None:
        """Answer one line and write the answer; in flight until the answer is written."""
        self._in_flight += 1
        self._idle.clear()
        self.requests += 1
        try:
            answer = await answer_line(line, self._dispatch)
            if answer is not None:
                writer.write(frame(answer))
                await writer.drain()
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()
