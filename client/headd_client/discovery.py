"""Which socket serves a store, found by the client itself.

The order: ``--socket`` (or an explicit path), else ``$HEADD_SOCKET``, else the store's own
``<store>/.memhtml/head.sock`` when a daemon bound it, else the socket the systemd user units hold
under the runtime directory (``$XDG_RUNTIME_DIR/headd/head.sock``) when it serves this store,
else the store's own path again (so a failure names the path the daemon binds by default).

"When it serves this store": the units read the store from one environment file,
``$XDG_CONFIG_HOME/headd/headd.env`` (``MEMHTML_ROOT=…``; without it ``~/memhtml``), and so does
this module, so a client asking about another store never lands on the runtime socket by accident.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from headd.wire.socket_path import resolve_socket, resolve_store

RUNTIME_SOCKET = Path("headd") / "head.sock"
ENV_FILE = Path("headd") / "headd.env"


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or str(Path.home()))


def unit_env_file(environ: Mapping[str, str]) -> Path:
    """The environment file the systemd units read (``%E/headd/headd.env``)."""
    config = environ.get("XDG_CONFIG_HOME") or str(_home(environ) / ".config")
    return Path(config) / ENV_FILE


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines as systemd's ``EnvironmentFile=`` reads them (comments, quotes)."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return values
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def unit_store(environ: Mapping[str, str]) -> Path:
    """The store the systemd units serve: the env file's ``MEMHTML_ROOT``, else ``~/memhtml``."""
    configured = read_env_file(unit_env_file(environ)).get("MEMHTML_ROOT")
    if configured:
        return Path(configured).expanduser().absolute()
    return (_home(environ) / "memhtml").absolute()


def client_store(flag: str | None, environ: Mapping[str, str]) -> Path:
    """The store a client means: ``--store``, else ``$MEMHTML_ROOT``, else the store the
    systemd units serve when their env file names one, else ``~/memhtml``. With the units set
    up, the store they serve is the default, so ``headctl status`` with no ``--store`` asks the
    daemon they run instead of inviting a second store at ``~/memhtml``."""
    if flag or environ.get("MEMHTML_ROOT"):
        return resolve_store(flag, environ)
    configured = read_env_file(unit_env_file(environ)).get("MEMHTML_ROOT")
    if configured:
        return Path(configured).expanduser().absolute()
    return resolve_store(None, environ)


def runtime_socket(environ: Mapping[str, str]) -> Path | None:
    """The units' socket, ``$XDG_RUNTIME_DIR/headd/head.sock`` (None without a runtime dir)."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / RUNTIME_SOCKET if runtime else None


def find_socket(flag: str | None, store: Path, environ: Mapping[str, str]) -> Path:
    """The socket to connect to for ``store`` (see the module docstring for the order)."""
    own = resolve_socket(flag, store, environ)
    if flag or environ.get("HEADD_SOCKET") or own.exists():
        return own
    runtime = runtime_socket(environ)
    if runtime is not None and runtime.exists() and unit_store(environ) == store:
        return runtime
    return own


def default_socket(
    store: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The socket for ``store`` (default: :func:`client_store`'s)."""
    env = os.environ if environ is None else environ
    resolved = client_store(None if store is None else os.fspath(store), env)
    return find_socket(None, resolved, env)
