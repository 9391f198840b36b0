"""sd_notify datagrams and the LISTEN_FDS hand-over, against real sockets."""

from __future__ import annotations

import os
import socket

from support.daemon import short_socket_dir

from headd.daemon.notify import Notifier, inherited_listener


def test_notifier_sends_ready_status_and_stopping_to_a_datagram_socket() -> None:
    path = short_socket_dir() / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sink:
        sink.bind(str(path))
        sink.settimeout(2)
        env = {"NOTIFY_SOCKET": str(path)}
        notifier = Notifier.from_environ(env)
        assert "NOTIFY_SOCKET" not in env, "consumed, so children do not inherit it"
        assert notifier.status("loading")
        assert notifier.ready("serving")
        assert notifier.stopping()
        got = [sink.recv(4096).decode() for _ in range(3)]
    assert got[0] == "STATUS=loading"
    assert got[1].split("\n")[0] == "READY=1"
    assert f"MAINPID={os.getpid()}" in got[1].split("\n")
    assert got[2] == "STOPPING=1"


def test_notifier_reaches_an_abstract_socket() -> None:
    name = f"headd-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sink:
        sink.bind("\0" + name)
        sink.settimeout(2)
        assert Notifier("@" + name).ready()
        assert sink.recv(4096).startswith(b"READY=1")


def test_without_notify_socket_nothing_is_sent() -> None:
    notifier = Notifier.from_environ({})
    assert not notifier.enabled
    assert not notifier.ready()


def test_listen_fds_for_another_pid_is_ignored() -> None:
    env = {"LISTEN_FDS": "1", "LISTEN_PID": str(os.getpid() + 1)}
    assert inherited_listener(env) is None


def test_no_listen_fds_means_bind_ourselves() -> None:
    assert inherited_listener({}) is None
