"""Where the store and the socket are, and how the listening socket is made safely.

Resolution is the contract's (section 1), shared by the daemon, the client library and headctl:
store ``--store`` → ``$MEMHTML_ROOT`` → ``~/memhtml``; socket ``--socket`` → ``$HEADD_SOCKET`` →
``<store>/.memhtml/head.sock``. The resolvers are pure over an ``environ`` mapping.

Binding follows the rules memhtml's head server settled on: refuse a path ``sun_path`` cannot hold
(107 bytes), probe an existing file first (a live daemon → refuse; connection refused → a stale
file a killed daemon left, replace it; not a socket → refuse, since we never remove a file we did
not make), and create the socket with mode 0600 by narrowing the umask around ``bind`` so it is
never reachable by another user, not even for the instant before a ``chmod``.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import stat
import struct
from collections.abc import Mapping
from pathlib import Path

from headd.errors import DaemonRunning, StorageFailure

log = logging.getLogger(__name__)

SUN_PATH_LIMIT = 107
"""Bytes of a Unix socket path, without the terminating NUL, that Linux's ``sun_path`` holds."""

SOCKET_MODE = 0o600


def resolve_store(flag: str | None, environ: Mapping[str, str]) -> Path:
    """``--store``, else ``$MEMHTML_ROOT``, else ``~/memhtml`` (absolute, not required to exist)."""
    if flag:
        return Path(flag).expanduser().absolute()
    env = environ.get("MEMHTML_ROOT")
    if env:
        return Path(env).expanduser().absolute()
    home = environ.get("HOME") or str(Path.home())
    return (Path(home) / "memhtml").absolute()


def resolve_socket(flag: str | None, store: Path, environ: Mapping[str, str]) -> Path:
    """``--socket``, else ``$HEADD_SOCKET``, else ``<store>/.memhtml/head.sock``."""
    if flag:
        return Path(flag).expanduser().absolute()
    env = environ.get("HEADD_SOCKET")
    if env:
        return Path(env).expanduser().absolute()
    return store / ".memhtml" / "head.sock"


class SocketPathTooLong(StorageFailure):
    """The socket path does not fit ``sun_path``; the message names the limit."""


def check_length(path: Path) -> None:
    size = len(os.fsencode(path))
    if size > SUN_PATH_LIMIT:
        raise SocketPathTooLong(
            f"socket path is {size} bytes, longer than the {SUN_PATH_LIMIT}-byte limit of a "
            f"Unix socket path; pass a shorter --socket",
            {"path": str(path), "bytes": size, "limit": SUN_PATH_LIMIT},
        )


def probe_existing(path: Path, *, timeout: float = 1.0) -> None:
    """Make ``path`` free to bind, or refuse: see the module docstring for the three cases."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise StorageFailure(
            f"{path} exists and is not a socket; refusing to replace it",
            {"path": str(path), "reason": "not-a-socket"},
        )
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(os.fspath(path))
    except ConnectionRefusedError:
        log.warning("removing stale socket %s (no daemon listening)", path)
        os.unlink(path)
        return
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            os.unlink(path)
            return
        raise StorageFailure(
            f"cannot probe existing socket {path}: {exc.strerror}", {"path": str(path)}
        ) from None
    finally:
        probe.close()
    raise DaemonRunning(
        f"a daemon already answers on {path}; refusing to start a second one",
        {"path": str(path)},
    )


def bind_listener(path: Path, *, backlog: int = 128) -> socket.socket:
    """A listening Unix socket at ``path`` with mode 0600, after the length check and the probe."""
    check_length(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    probe_existing(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(os.fspath(path))
    except OSError as exc:
        sock.close()
        raise StorageFailure(f"cannot bind {path}: {exc.strerror}", {"path": str(path)}) from None
    finally:
        os.umask(old_umask)
    os.chmod(path, SOCKET_MODE)
    sock.listen(backlog)
    sock.setblocking(False)
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (SO_PEERCRED), or None where unsupported."""
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)
