"""A daemon in this process: ``headd.daemon.main.run`` on its own thread and event loop, stopped
by an explicit event instead of a signal, so a test can start and stop many in one process."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from headd_client.sync_client import Client

from headd.daemon.config import build_parser, config_from
from headd.daemon.main import run
from headd.errors import DaemonUnavailable


class InProcessDaemon:
    def __init__(self, store: Path, socket_path: Path, embedder: str = "off") -> None:
        args = build_parser().parse_args(
            ["--store", str(store), "--socket", str(socket_path), "--embedder", embedder]
        )
        self.config = config_from(args, {})
        self.socket_path = socket_path
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.result: int | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def go() -> int:
            self.stop_event = asyncio.Event()
            self.ready.set()
            return await run(self.config, {}, self.stop_event)

        self.result = self.loop.run_until_complete(go())
        self.loop.close()

    def start(self) -> InProcessDaemon:
        self.thread.start()
        self.ready.wait(10)
        for _ in range(400):
            try:
                with Client(self.socket_path, timeout=5) as c:
                    c.call("status")
                return self
            except DaemonUnavailable:
                threading.Event().wait(0.025)
        raise AssertionError("in-process daemon did not come up")

    def stop(self) -> int | None:
        assert self.stop_event is not None
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(30)
        return self.result
