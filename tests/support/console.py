"""The console for tests: a real store, a real daemon, the real console server, a real browser.

The console serves on a free loopback port in a thread of the test process (the same
``ConsoleServer`` ``headctl ui`` runs); the daemon is the real ``headd`` subprocess. The browser
is the system's Chromium driven by Playwright, launched with a fresh profile and no network
services of its own; without Chromium the browser tests skip and say why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client.console.serve import ConsoleServer

from support.daemon import Daemon, short_socket_dir
from support.memory import memory_html
from support.stores import make_store

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
POOL = "resources/database/connection-pool-size-is-forty.html"
HOSTILE = "areas/inbox/hostile-markup.html"

#: A memory whose article tries every way agent-written markup the parser accepts could act in
#: the reader's page: a remote image, a ``javascript:`` link, a frame, a refresh, an object, a form
#: and a base address.
HOSTILE_ARTICLE = (
    "<p><mark>The hostile memory keeps its claim.</mark> "
    '<img src="http://attacker.invalid/pixel.png">'
    '<a id="js" href="javascript:window.__pwned=\'href\'">click me</a>'
    '<iframe src="http://attacker.invalid/frame"></iframe>'
    '<meta http-equiv="refresh" content="0;url=http://attacker.invalid/">'
    '<object data="http://attacker.invalid/object"></object>'
    '<base href="http://attacker.invalid/">'
    '<form action="http://attacker.invalid/"><button id="go">go</button></form>'
    '<a href="/areas/inbox/user-prefers-short-answers.html">a memory link</a></p>'
)
#: A file the parser refuses (script and event handlers): the console still shows its history
#: and its reason for being skipped, as text.
SCRIPTED = "areas/inbox/scripted-markup.html"
SCRIPTED_ARTICLE = (
    "<p><mark>A scripted memory.</mark>"
    '<script>window.__pwned = "script"; alert(1)</script>'
    '<img src="x" onerror="window.__pwned=\'onerror\'">'
    "<svg onload=\"window.__pwned='svg'\"></svg></p>"
)

FILES: dict[str, str] = {
    POSTGRES: memory_html(
        "Postgres is the system of record",
        "Postgres is the system of record for orders.",
        body="Replicas serve reads only.",
        entities=("service:checkout-api",),
        tags=("database",),
    ),
    "areas/inbox/user-prefers-short-answers.html": memory_html(
        "User prefers short answers",
        "The user prefers short answers with the command first.",
        memory_type="user_preference",
    ),
    POOL: memory_html(
        "Connection pool size is forty",
        "The connection pool size is forty per pod.",
        body="Raised from twenty after the November outage.",
        entities=("service:checkout-api",),
        links=(("relates_to", f"/{POSTGRES}"),),
    ),
    HOSTILE: memory_html("Hostile markup", "x", article=HOSTILE_ARTICLE),
    SCRIPTED: memory_html("Scripted markup", "x", article=SCRIPTED_ARTICLE),
    "areas/inbox/broken-memory.html": "<!doctype html><html><head><title>x</title></head>"
    "<body><p>no article here</p></body></html>\n",
}


def have_chromium() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def cannot_install_chromium() -> str | None:
    """Why scripts/system-deps.sh (run by ./run-tests) cannot install Chromium here, or None
    when it can (root with apt-get): then a missing browser fails the tests instead."""
    if os.geteuid() != 0:
        return (
            "no Chromium, and not root, so scripts/system-deps.sh cannot install Debian's chromium"
        )
    if shutil.which("apt-get") is None:
        return "no Chromium, and no apt-get, so scripts/system-deps.sh cannot install it"
    return None


_SKIP = None if have_chromium() else cannot_install_chromium()
needs_chromium = pytest.mark.skipif(_SKIP is not None, reason=_SKIP or "")


class Running:
    """A store with its daemon and console; ``url(route)`` for the browser, ``login`` once."""

    def __init__(self, root: Path) -> None:
        self.store = root
        self.seed = make_store(root, FILES)
        self.daemon = Daemon(root, short_socket_dir() / "head.sock").wait_ready()
        self.server = ConsoleServer(root, self.daemon.socket_path, 0, spawn=False)
        self.thread = threading.Thread(target=self.server.serve, daemon=True)
        self.thread.start()
        self._wait_listening()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.server.server.started:
                return
            time.sleep(0.02)
        raise AssertionError("the console did not start")

    def stop(self) -> None:
        self.server.stop()
        self.thread.join(10)
        self.daemon.stop()


@contextlib.contextmanager
def running_console(root: Path) -> Iterator[Running]:
    running = Running(root)
    try:
        yield running
    finally:
        running.stop()


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """A Playwright browser context on the system's Chromium with a fresh profile."""
    from playwright.sync_api import sync_playwright

    if not have_chromium():
        raise RuntimeError("no Chromium, though root with apt-get: run scripts/system-deps.sh")
    profile = tempfile.mkdtemp(prefix="hd-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                headless=True,
                args=CHROMIUM_FLAGS,  # the profile is the fresh user-data-dir above
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """A plain GET outside any browser (no redirects followed): status and body."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with opener.open(request, timeout=20) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
