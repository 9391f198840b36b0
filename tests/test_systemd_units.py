"""The systemd units, checked by systemd's own tools, and socket activation for real.

``systemd-analyze verify`` must accept both units without a single warning (it exits 0 on a
setting it cannot parse, so stderr is part of the check; a broken copy proves the check bites).
``systemd-socket-activate`` then plays systemd: it owns the listening socket, starts the real
daemon on the first connection with LISTEN_FDS=1, and passes NOTIFY_SOCKET, which here is a
datagram socket of the test that must receive READY=1 and, at SIGTERM, STOPPING=1.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.daemon import read_line, request_line, short_socket_dir
from support.data import REPO
from support.stores import make_store

UNITS = REPO / "systemd"
ANALYZE = shutil.which("systemd-analyze")
ACTIVATE = shutil.which("systemd-socket-activate")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze missing (apt: systemd)")
needs_activate = pytest.mark.skipif(
    ACTIVATE is None, reason="systemd-socket-activate missing (apt: systemd)"
)


def verify(directory: Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    return subprocess.run(
        [ANALYZE, "verify", "headd.socket", "headd.service"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


@needs_analyze
def test_units_verify_cleanly() -> None:
    done = verify(UNITS)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr


@needs_analyze
@pytest.mark.parametrize(
    ("unit", "good", "bad"),
    [
        ("headd.service", "Type=notify", "Type=notifyy"),
        ("headd.socket", "SocketMode=0600", "SocketMode=banana"),
        ("headd.service", "ExecStart=/usr/bin/env", "ExecStart=/usr/bin/no-such-env"),
    ],
)
def test_a_broken_unit_fails_the_check(tmp_path: Path, unit: str, good: str, bad: str) -> None:
    for name in ("headd.socket", "headd.service"):
        shutil.copy(UNITS / name, tmp_path / name)
    target = tmp_path / unit
    target.write_text(target.read_text().replace(good, bad))
    done = verify(tmp_path)
    assert done.returncode != 0 or done.stderr.strip() != ""


def test_units_say_what_the_contract_asks() -> None:
    service = settings(UNITS / "headd.service")
    sock = settings(UNITS / "headd.socket")
    assert service["Type"] == ["notify"]
    assert service["Restart"] == ["on-failure"]
    assert sock["SocketMode"] == ["0600"]
    assert sock["ListenStream"] == ["%h/memhtml/.memhtml/head.sock"], "the daemon's default path"
    assert "headd.socket" in service["Requires"]


@needs_activate
def test_socket_activation_starts_the_daemon_and_it_notifies_ready(tmp_path: Path) -> None:
    assert ACTIVATE is not None
    store = tmp_path / "store"
    make_store(store)
    sockets = short_socket_dir()
    listen = sockets / "head.sock"
    notify = sockets / "notify.sock"
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sink.bind(str(notify))
    sink.settimeout(30)
    log = open(tmp_path / "activate.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            ACTIVATE,
            "-l",
            str(listen),
            "-E",
            f"NOTIFY_SOCKET={notify}",
            sys.executable,
            "-m",
            "headd.daemon.main",
            "--store",
            str(store),
            "--embedder",
            "off",
        ],
        cwd=str(REPO),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(400):
            if listen.exists():
                break
            proc.poll()
            assert proc.returncode is None
            sink.settimeout(0.025)
            try:
                sink.recv(4096)
                raise AssertionError("the daemon must not start before the first connection")
            except TimeoutError:
                pass
        sink.settimeout(30)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(30)
            client.connect(str(listen))
            client.sendall(request_line("status"))
            status = json.loads(read_line(client))["result"]
        assert status["pid"] == proc.pid, "systemd-socket-activate execs the daemon in place"
        assert status["socket"] is None, "an inherited socket is not the daemon's to remove"
        messages = []
        while not any(m.startswith("READY=1") for m in messages):
            messages.append(sink.recv(4096).decode())
        ready = next(m for m in messages if m.startswith("READY=1")).split("\n")
        assert f"MAINPID={proc.pid}" in ready
        assert any(m.startswith("STATUS=loading") for m in messages)
        proc.terminate()
        assert proc.wait(30) == 0
        assert sink.recv(4096) == b"STOPPING=1"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sink.close()
        log.close()
    text = (tmp_path / "activate.log").read_text()
    assert "using the socket systemd passed (fd 3)" in text
    os.unlink(listen)
