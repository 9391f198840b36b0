"""The client finds a store's socket by itself: the order of ``headd_client.discovery``, with
real listening sockets, and ``Client()`` with no path against a real daemon."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from headd_client import Client, default_socket
from headd_client.discovery import find_socket, read_env_file, unit_store
from support.daemon import Daemon, short_socket_dir
from support.stores import make_store


def listening(path: Path) -> socket.socket:
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    return sock


@pytest.fixture
def places(tmp_path: Path) -> Iterator[dict[str, Path]]:
    runtime = short_socket_dir()
    found = {
        "store": tmp_path / "store",
        "home": tmp_path / "home",
        "runtime": runtime,
        "unit_socket": runtime / "headd" / "head.sock",
        "env_file": tmp_path / "home" / ".config" / "headd" / "headd.env",
    }
    found["store"].mkdir()
    yield found


def environ(places: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"HOME": str(places["home"]), "XDG_RUNTIME_DIR": str(places["runtime"]), **extra}


def test_the_units_socket_serves_the_store_the_env_file_names(places: dict[str, Path]) -> None:
    store, own = places["store"], places["store"] / ".memhtml" / "head.sock"
    env = environ(places)
    assert find_socket(None, store, env) == own, "nothing listens: the store's own path"
    with listening(places["unit_socket"]):
        assert find_socket(None, store, env) == own, "the units serve ~/memhtml, not this store"
        places["env_file"].parent.mkdir(parents=True)
        places["env_file"].write_text(f'# the store\nMEMHTML_ROOT="{store}"\n', encoding="utf-8")
        assert find_socket(None, store, env) == places["unit_socket"]
        with listening(own):
            assert find_socket(None, store, env) == own, "a daemon bound in the store wins"
        explicit = places["runtime"] / "x.sock"
        assert find_socket(str(explicit), store, env) == explicit
        assert find_socket(None, store, {**env, "HEADD_SOCKET": str(explicit)}) == explicit


def test_without_the_env_file_the_units_serve_home_memhtml(places: dict[str, Path]) -> None:
    env = environ(places)
    assert unit_store(env) == places["home"] / "memhtml"
    with listening(places["unit_socket"]):
        assert find_socket(None, places["home"] / "memhtml", env) == places["unit_socket"]


def test_the_env_file_reads_as_systemd_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "headd.env"
    path.write_text("# c\n; c\n\nMEMHTML_ROOT = '/srv/mem'\nOTHER=x=y\nnot a line\n")
    assert read_env_file(path) == {"MEMHTML_ROOT": "/srv/mem", "OTHER": "x=y"}
    assert read_env_file(tmp_path / "missing") == {}


def test_client_with_no_path_finds_the_daemon_of_memhtml_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s"
    sha = make_store(store)
    own = store / ".memhtml" / "head.sock"
    own.parent.mkdir()  # the daemon support keeps its log beside the socket
    daemon = Daemon(store, own).wait_ready()
    try:
        monkeypatch.setenv("MEMHTML_ROOT", str(store))
        monkeypatch.delenv("HEADD_SOCKET", raising=False)
        assert default_socket() == own
        with Client() as headd:
            assert headd.call("status")["sha"] == sha
        with Client(store=store) as headd:
            assert headd.call("status")["store"] == str(store)
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_headctl_without_store_serves_the_store_the_units_serve(places: dict[str, Path]) -> None:
    """With the units' env file naming a store and no ``--store``, ``headctl status`` asks the
    daemon of that store instead of inviting a second store at ``~/memhtml``."""
    import json
    import os
    import subprocess
    import sys

    store = places["store"]
    make_store(store)
    places["env_file"].parent.mkdir(parents=True)
    places["env_file"].write_text(f"MEMHTML_ROOT={store}\n", encoding="utf-8")
    env = {**os.environ, **environ(places)}
    for name in ("MEMHTML_ROOT", "HEADD_SOCKET"):
        env.pop(name, None)
    (store / ".memhtml").mkdir(exist_ok=True)
    daemon = Daemon(store, store / ".memhtml" / "head.sock").wait_ready()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "headd_client.headctl", "--json", "status"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        daemon.stop()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["store"] == str(store)
