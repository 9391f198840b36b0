"""The console's Remote section in a real Chromium: a real conflict between two daemons that
follow one bare hub, listed on the review page and resolved through its form (the daemon's
``sync`` with ``resolve``)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from headd_client.console.serve import ConsoleServer
from headd_client.sync_client import Client
from support.console import browser, needs_chromium
from support.daemon import Daemon, short_socket_dir, wait_for
from support.git import external_commit, git
from support.memory import memory_html
from support.stores import make_store

pytestmark = [needs_chromium, pytest.mark.slow]

WINDOW = "areas/inbox/window.html"


def following(store: Path, sock: Path) -> Daemon:
    extra = ["--remote", "origin", "--fetch-interval", "0.5"]
    return Daemon(store, sock, extra=extra).wait_ready()


def conflicts(sock: Path) -> list[dict[str, str]]:
    with Client(sock, timeout=30) as client:
        return list(client.call("status")["remote"]["conflicts"])


def test_a_remote_conflict_is_listed_and_resolved_from_the_review_page(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    make_store(seed)
    hub = tmp_path / "hub.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(hub)], check=True)
    a, b = tmp_path / "a", tmp_path / "b"
    for store in (a, b):
        subprocess.run(["git", "clone", "-q", str(hub), str(store)], check=True)
    external_commit(a, {WINDOW: memory_html("Window", "The window opens on Monday.")})
    external_commit(b, {WINDOW: memory_html("Window", "The window opens on Friday.")})
    socks = short_socket_dir()
    first = following(a, socks / "a.sock")
    second: Daemon | None = None
    server: ConsoleServer | None = None
    try:
        assert wait_for(
            lambda: git(hub, "rev-parse", "main") == git(a, "rev-parse", "main"), 30, 0.2
        )
        second = following(b, socks / "b.sock")
        assert wait_for(lambda: conflicts(second.socket_path), 30, 0.2)  # type: ignore[union-attr]
        server = ConsoleServer(b, second.socket_path, 0, spawn=False)
        threading.Thread(target=server.serve, daemon=True).start()
        assert wait_for(lambda: server.server.started, 20)  # type: ignore[union-attr]
        with browser() as ctx:
            ctx.set_default_timeout(10_000)
            page = ctx.new_page()
            page.goto(server.url)
            page.goto(f"http://127.0.0.1:{server.port}/review")
            remote = page.locator("section.remote")
            assert WINDOW in remote.inner_text()
            assert "daemon resident" in page.content()  # status.memory's figures
            remote.get_by_role("button", name="Mark resolved").click()
            page.wait_for_load_state()
            assert "conflict resolved" in page.locator(".notice").inner_text()
            assert "No open conflicts." in page.locator("section.remote").inner_text()
        assert conflicts(second.socket_path) == []
    finally:
        if server is not None:
            server.stop()
        if second is not None:
            second.stop()
        first.stop()
