"""An asyncio client over one connection, safe to share between tasks.

Many tasks may call at once: each request registers a future under its id, one reader task feeds
the socket's bytes to the sans-I/O core and resolves the futures by id. When the connection
drops, every pending call fails with ``DaemonUnavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from headd.errors import DaemonUnavailable
from headd_client.discovery import default_socket
from headd_client.protocol import Answer, ClientProtocol, unwrap

if TYPE_CHECKING:
    from headd_client import calls
    from headd_client.calls import Call, async_method

READ_CHUNK = 256 * 1024

T = TypeVar("T")


class AsyncClient:
    """``async with AsyncClient() as c: await c.call("status")``.

    Without ``socket_path`` the client finds the socket of ``store`` by itself, as ``Client``.
    """

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        store: str | os.PathLike[str] | None = None,
    ) -> None:
        self.socket_path = Path(socket_path) if socket_path is not None else default_socket(store)
        self._protocol = ClientProtocol()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pump: asyncio.Task[None] | None = None
        self._pending: dict[int | str | None, asyncio.Future[Answer]] = {}
        self._write_lock = asyncio.Lock()

    async def connect(self) -> AsyncClient:
        if self._writer is None:
            try:
                self._reader, self._writer = await asyncio.open_unix_connection(
                    os.fspath(self.socket_path)
                )
            except OSError as exc:
                raise DaemonUnavailable(
                    f"no daemon answers on {self.socket_path}: {exc.strerror or exc}",
                    {"socket": str(self.socket_path)},
                ) from None
            self._pump = asyncio.create_task(self._read_answers())
        return self

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
            self._pump = None
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
            self._writer = None
        self._fail_pending(DaemonUnavailable("client closed"))

    async def __aenter__(self) -> AsyncClient:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def call(
        self, method: str, params: Mapping[str, object] | None = None, **kw: object
    ) -> object:
        await self.connect()
        request_id, line = self._protocol.request(method, {**(params or {}), **kw})
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._send(line)
        answer = await future
        return unwrap(answer)

    async def notify(
        self, method: str, params: Mapping[str, object] | None = None, **kw: object
    ) -> None:
        await self.connect()
        await self._send(self._protocol.notification(method, {**(params or {}), **kw}))

    async def run(self, call: Call[T]) -> T:
        """Run one typed call (``headd_client.calls``) and decode its answer into its type."""
        return call.decode(await self.call(call.method, call.params))

    # The typed calls (``headd_client.calls``), one method each. Declared for the type checker
    # and made on first use (``__getattr__``): their types cost ``headctl`` a tenth of its start.
    if TYPE_CHECKING:
        status = async_method(calls.status)
        search = async_method(calls.search)
        read = async_method(calls.read)
        skipped = async_method(calls.skipped)
        resolve = async_method(calls.resolve)
        inbound = async_method(calls.inbound)
        by_entity = async_method(calls.by_entity)
        by_frame_key = async_method(calls.by_frame_key)
        by_content_hash = async_method(calls.by_content_hash)
        advance = async_method(calls.advance)
        vectors_fill = async_method(calls.vectors_fill)
        session_open = async_method(calls.session_open)
        session_apply = async_method(calls.session_apply)
        session_commit = async_method(calls.session_commit)
        session_rebase = async_method(calls.session_rebase)
        session_close = async_method(calls.session_close)
        session_list = async_method(calls.session_list)
        recall = async_method(calls.recall)
        index_search = async_method(calls.index_search)
        index_status = async_method(calls.index_status)
        traces_search = async_method(calls.traces_search)
        traces_show = async_method(calls.traces_show)
        sync = async_method(calls.sync)

    if not TYPE_CHECKING:  # the checker reads the declarations above, not this

        def __getattr__(self, name: str) -> object:
            if name.startswith("_"):
                raise AttributeError(name)
            from headd_client import calls

            if name not in calls.TYPED_CALLS:
                raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
            method = calls.async_method(getattr(calls, name))
            return method.__get__(self, type(self))

    async def _send(self, line: bytes) -> None:
        writer = self._writer
        if writer is None:
            raise DaemonUnavailable("not connected")
        async with self._write_lock:
            try:
                writer.write(line)
                await writer.drain()
            except (ConnectionError, OSError) as exc:
                raise DaemonUnavailable(f"daemon went away: {exc}") from None

    async def _read_answers(self) -> None:
        reader = self._reader
        assert reader is not None
        error: Exception = DaemonUnavailable("daemon closed the connection")
        try:
            while True:
                data = await reader.read(READ_CHUNK)
                if not data:
                    break
                for item in self._protocol.receive(data):
                    for answer in item if isinstance(item, list) else [item]:
                        future = self._pending.pop(answer.id, None)
                        if future is not None and not future.done():
                            future.set_result(answer)
        except (ConnectionError, OSError) as exc:
            error = DaemonUnavailable(f"daemon went away: {exc}")
        except Exception as exc:  # a protocol violation fails every pending call with it
            error = exc
        self._fail_pending(error)

    def _fail_pending(self, error: Exception) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)
