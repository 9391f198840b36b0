"""Who may talk to the console: the person who started it, from this machine, in a browser.

A local web server is reachable by every page the person's browser opens, so each request is
checked before any page runs (an ASGI middleware around the whole app):

- **Host** must be the console's own (``127.0.0.1:PORT`` or ``localhost:PORT``): a DNS-rebinding
  page reaches the loopback address under its own host name, and is refused here.
- **The token**: a secret made at start, printed once in the URL. A request carrying it as
  ``?token=`` gets it back as an HttpOnly, SameSite=Strict cookie named after the port (cookies
  are shared between a host's ports) and a redirect to the same page without it, so the token
  does not stay in the address bar or the history. Every other request needs the cookie.
  Without either the answer is 401 with a body that says nothing about the store.
- **State changes** are POSTs only, with a same-origin ``Origin`` header and the form's ``csrf``
  field (an HMAC of the token, so it is never the token itself): a cross-site form post fails
  both, and a GET never changes anything.
- Every answer carries a strict Content-Security-Policy (no script at all, nothing loaded from
  elsewhere, no framing, forms only to the console), so a sanitizer miss in a memory's own HTML
  (``sanitize.py``) still runs nothing and loads nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; script-src 'none'; object-src 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
SAFE_METHODS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class Secret:
    """The console's token and the port it serves on (the names its Host and Origin take)."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @property
    def cookie_name(self) -> str:
        return f"headd_console_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    @property
    def csrf(self) -> str:
        """The value every form carries: derived from the token, never the token itself."""
        return hmac.new(self.token.encode(), b"headd-console-csrf", hashlib.sha256).hexdigest()

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?{urlencode({'token': self.token})}"

    def matches(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate, self.token)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header is no cookie
        return None
    morsel = jar.get(name)
    return None if morsel is None else morsel.value


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = text.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The checks above, around ``app``; the CSRF field itself is checked by the form handlers
    (``check_csrf``), which read the body this middleware leaves unread."""

    def __init__(self, app: ASGIApp, secret: Secret) -> None:
        self.app = app
        self.secret = secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return
        if _header(scope, b"host") not in self.secret.hosts:
            await _plain(send, 403, "forbidden\n", [])
            return
        method = scope["method"]
        query = dict(parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")))
        if method in SAFE_METHODS and self.secret.matches(query.get("token")):
            await self._adopt(scope, query, send)
            return
        if not self.secret.matches(_cookie(scope, self.secret.cookie_name)):
            await _plain(send, 401, "the console needs the URL it printed when it started\n", [])
            return
        if method not in SAFE_METHODS and (
            method != "POST" or _header(scope, b"origin") not in self.secret.origins
        ):
            await _plain(send, 403, "forbidden\n", [])
            return

        started, cpu = time.perf_counter(), time.process_time()

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                # The page's own time to the start of its answer, and the console process's CPU
                # meanwhile (what bench/ui_bench.py reads).
                wall = (time.perf_counter() - started) * 1000
                used = (time.process_time() - cpu) * 1000
                took = f"app;dur={wall:.2f}, cpu;dur={used:.2f}".encode()
                headers = [*message.get("headers", []), *SECURITY_HEADERS]
                message["headers"] = [*headers, (b"server-timing", took)]
            await send(message)

        await self.app(scope, receive, secured)

    async def _adopt(self, scope: Scope, query: dict[str, str], send: Send) -> None:
        """The token in the URL: set the cookie and send the browser to the same page without
        the token."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        path = str(scope.get("path") or "/")
        if not path.startswith("/") or path.startswith("//"):
            path = "/"  # never a redirect off the console (``//host`` is another site)
        location = quote(path, safe="/") + (f"?{rest}" if rest else "")
        cookie = f"{self.secret.cookie_name}={self.secret.token}; Path=/; HttpOnly; SameSite=Strict"
        await _plain(
            send,
            303,
            "signed in\n",
            [(b"location", location.encode()), (b"set-cookie", cookie.encode())],
        )


def check_csrf(secret: Secret, submitted: str | None) -> bool:
    return submitted is not None and hmac.compare_digest(submitted, secret.csrf)
