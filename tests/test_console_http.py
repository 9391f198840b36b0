"""The console's door, over plain HTTP: the token, the cookie, Host, Origin and the CSRF field.

A real console on a real store and daemon; requests are made with the standard library, so each
header is exactly what the test sets (a browser would add its own).
"""

from __future__ import annotations

import http.client
import re
import subprocess
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pygit2
import pytest
from headd_client.console.security import CSP
from support.console import POSTGRES, Running, get, running_console
from support.daemon import PYTHON
from support.data import REPO


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with running_console(tmp_path_factory.mktemp("console-http") / "store") as running:
        yield running


def cookie(console: Running) -> str:
    return f"{console.server.secret.cookie_name}={console.server.secret.token}"


def request(
    console: Running,
    method: str,
    path: str,
    headers: dict[str, str],
    body: str | None = None,
) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", console.server.port, timeout=20)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        data = body.encode() if body is not None else b""
        if body is not None:
            conn.putheader("Content-Type", "application/x-www-form-urlencoded")
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read().decode()
    finally:
        conn.close()


def own_host(console: Running) -> str:
    return f"127.0.0.1:{console.server.port}"


@pytest.mark.parametrize("route", ["/", "/?q=postgres", f"/memory?path={POSTGRES}", "/review"])
def test_without_the_token_every_page_is_401_and_says_nothing(console: Running, route: str) -> None:
    status, body = get(console.origin + route)
    assert status == 401
    assert "postgres" not in body.lower() and "areas/" not in body


def test_a_wrong_token_or_cookie_is_refused(console: Running) -> None:
    assert get(console.origin + "/?token=wrong")[0] == 401
    headers = {"Cookie": f"{console.server.secret.cookie_name}=wrong"}
    assert get(console.origin + "/", headers)[0] == 401


def test_the_printed_url_sets_a_strict_cookie_and_drops_the_token(console: Running) -> None:
    status, headers, _ = request(
        console,
        "GET",
        f"/?{urlencode({'token': console.server.secret.token, 'q': 'pg'})}",
        {"Host": own_host(console)},
    )
    assert status == 303
    assert headers["location"] == "/?q=pg"
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(cookie(console) + ";")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie


def test_the_token_redirect_never_leaves_the_console(console: Running) -> None:
    token = urlencode({"token": console.server.secret.token})
    status, headers, _ = request(
        console, "GET", f"//attacker.invalid/x?{token}", {"Host": own_host(console)}
    )
    assert status == 303 and headers["location"] == "/"


def test_with_the_cookie_pages_answer_with_a_strict_policy(console: Running) -> None:
    status, headers, body = request(
        console, "GET", "/?q=postgres", {"Host": own_host(console), "Cookie": cookie(console)}
    )
    assert status == 200 and "Postgres is the system of record" in body
    assert headers["content-security-policy"] == CSP
    assert "script-src 'none'" in CSP and "default-src 'none'" in CSP
    assert headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("host", ["attacker.invalid", "attacker.invalid:{port}", "127.0.0.1", ""])
def test_a_foreign_host_is_refused_even_with_the_cookie(console: Running, host: str) -> None:
    headers = {"Host": host.format(port=console.server.port), "Cookie": cookie(console)}
    status, _, body = request(console, "GET", "/?q=postgres", headers)
    assert status == 403 and "postgres" not in body.lower()


def test_localhost_is_the_console_too(console: Running) -> None:
    headers = {"Host": f"localhost:{console.server.port}", "Cookie": cookie(console)}
    assert request(console, "GET", "/", headers)[0] == 200


def archive_form(console: Running, csrf: str) -> str:
    return urlencode({"csrf": csrf, "path": POSTGRES, "reason": "test"})


@pytest.mark.parametrize(
    "origin", [None, "http://attacker.invalid", "null", "http://127.0.0.1:1", "https://127.0.0.1"]
)
def test_a_post_from_another_origin_changes_nothing(console: Running, origin: str | None) -> None:
    before = pygit2.Repository(str(console.store)).head.target
    headers = {"Host": own_host(console), "Cookie": cookie(console)}
    if origin is not None:
        headers["Origin"] = origin
    body = archive_form(console, console.server.secret.csrf)
    status, _, _ = request(console, "POST", "/do/archive", headers, body)
    assert status == 403
    assert pygit2.Repository(str(console.store)).head.target == before


def test_a_post_without_the_csrf_field_changes_nothing(console: Running) -> None:
    before = pygit2.Repository(str(console.store)).head.target
    headers = {"Host": own_host(console), "Cookie": cookie(console), "Origin": console.origin}
    for csrf in ("", "forged", console.server.secret.token):
        status, _, _ = request(console, "POST", "/do/archive", headers, archive_form(console, csrf))
        assert status == 403
    assert pygit2.Repository(str(console.store)).head.target == before


def test_a_state_change_is_never_a_get(console: Running) -> None:
    headers = {"Host": own_host(console), "Cookie": cookie(console)}
    status, _, _ = request(console, "GET", "/do/archive?" + archive_form(console, "x"), headers)
    assert status == 405


def test_a_same_origin_post_with_its_csrf_field_commits(console: Running) -> None:
    headers = {"Host": own_host(console), "Cookie": cookie(console), "Origin": console.origin}
    body = archive_form(console, console.server.secret.csrf)
    status, answer, _ = request(console, "POST", "/do/archive", headers, body)
    assert status == 303 and answer["location"].startswith("/memory?path=archive%2F")
    head = pygit2.Repository(str(console.store)).head.peel(pygit2.Commit)
    assert f"memhtml(archive): {POSTGRES}" in head.message


def test_discard_is_a_checked_post_that_deletes_only_the_run(console: Running) -> None:
    repo = pygit2.Repository(str(console.store))
    main = repo.head.target
    ref = "refs/heads/sleep/2026-12-01"
    repo.references.create(ref, main)
    body = urlencode({"csrf": console.server.secret.csrf, "run": "sleep/2026-12-01"})
    headers = {"Host": own_host(console), "Cookie": cookie(console)}
    forged = urlencode({"csrf": "forged", "run": "sleep/2026-12-01"})
    for origin, form in (("http://attacker.invalid", body), (console.origin, forged)):
        status, _, _ = request(console, "POST", "/do/discard", {**headers, "Origin": origin}, form)
        assert status == 403
        assert repo.references.get(ref) is not None
    headers["Origin"] = console.origin
    status, answer, _ = request(console, "POST", "/do/discard", headers, body)
    assert status == 303 and "discarded" in answer["location"]
    repo = pygit2.Repository(str(console.store))
    assert repo.references.get(ref) is None and repo.head.target == main
    status, _, page = request(console, "POST", "/do/discard", headers, body)
    assert status == 409 and "no sleep run sleep/2026-12-01" in page


def test_the_server_listens_on_loopback_only(console: Running) -> None:
    assert console.server.sock.getsockname()[0] == "127.0.0.1"


def headctl_ui(console: Running, port: int) -> list[str]:
    """``headctl ui`` for the console's store and daemon, on ``port``, opening no browser."""
    store, sock = str(console.store), str(console.daemon.socket_path)
    return [PYTHON, "-m", "headd_client.headctl", "--store", store, "--socket", sock, "ui"] + [
        "--port",
        str(port),
        "--no-open",
    ]


def test_headctl_ui_prints_one_url_and_serves_it(console: Running) -> None:
    """The command a person runs: one line with the URL, a console behind it, loopback only."""
    proc = subprocess.Popen(
        headctl_ui(console, 0),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=str(REPO),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{40,}", url), url
        status = 0
        for _ in range(100):
            try:
                status, _ = get(url)
                break
            except OSError:
                time.sleep(0.1)
        assert status == 303
        assert get(url.split("?")[0])[0] == 401
    finally:
        proc.terminate()
        proc.communicate(timeout=20)  # waits, and closes both pipes


def test_headctl_ui_on_a_taken_port_says_so_in_one_line(console: Running) -> None:
    """A port already in use is one clear line and exit status 1, never a traceback."""
    taken = console.server.port
    done = subprocess.run(
        headctl_ui(console, taken),
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"headctl ui: cannot listen on 127.0.0.1:{taken}: Address already in use"
        " (--port 0 picks a free one)"
    ]
