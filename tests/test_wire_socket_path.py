"""Store and socket resolution, the 107-byte limit, the stale-socket probe and the 0600 bind."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from support.daemon import short_socket_dir

from headd.errors import DaemonRunning, StorageFailure
from headd.wire.socket_path import (
    SUN_PATH_LIMIT,
    SocketPathTooLong,
    bind_listener,
    check_length,
    peer_uid,
    probe_existing,
    resolve_socket,
    resolve_store,
)


def test_store_resolution_order() -> None:
    env = {"MEMHTML_ROOT": "/env/store", "HOME": "/home/u"}
    assert resolve_store("/flag", env) == Path("/flag")
    assert resolve_store(None, env) == Path("/env/store")
    assert resolve_store(None, {"HOME": "/home/u"}) == Path("/home/u/memhtml")


def test_socket_resolution_order() -> None:
    store = Path("/s")
    env = {"HEADD_SOCKET": "/env/sock"}
    assert resolve_socket("/flag.sock", store, env) == Path("/flag.sock")
    assert resolve_socket(None, store, env) == Path("/env/sock")
    assert resolve_socket(None, store, {}) == Path("/s/.memhtml/head.sock")


def test_length_limit_is_107_bytes() -> None:
    ok = Path("/" + "a" * (SUN_PATH_LIMIT - 1))
    check_length(ok)
    with pytest.raises(SocketPathTooLong, match="107-byte limit") as info:
        check_length(Path("/" + "a" * SUN_PATH_LIMIT))
    assert info.value.code == "ERR_STORAGE"


def test_bind_makes_a_0600_socket_and_the_probe_sees_it_live() -> None:
    path = short_socket_dir() / "live.sock"
    listener = bind_listener(path)
    try:
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        with pytest.raises(DaemonRunning):
            probe_existing(path)
        assert path.exists()
    finally:
        listener.close()
        path.unlink()


def test_a_stale_socket_is_replaced() -> None:
    path = short_socket_dir() / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens: what SIGKILL leaves
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    listener = bind_listener(path)
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(path))
        client.close()
    finally:
        listener.close()
        path.unlink()


def test_a_file_that_is_not_a_socket_is_refused_and_kept() -> None:
    path = short_socket_dir() / "plain.sock"
    path.write_text("mine")
    with pytest.raises(StorageFailure, match="not a socket"):
        bind_listener(path)
    assert path.read_text() == "mine"


def test_peer_uid_reads_so_peercred() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_uid(left) == os.getuid()
