"""systemd's two small protocols, without libsystemd: sd_notify and socket activation.

``Notifier`` sends ``READY=1``, ``STATUS=…`` and ``STOPPING=1`` datagrams to ``$NOTIFY_SOCKET``
(a path, or an abstract name spelled with a leading ``@``); with no such variable every send is a
no-op, so the daemon calls it unconditionally. ``inherited_listener`` takes the listening socket
systemd passed (``LISTEN_FDS`` from fd 3, for this pid per ``LISTEN_PID``). Both read an
``environ`` mapping passed in, and unset the variables they consumed so children do not inherit
them (as ``sd_listen_fds(1)`` does).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import MutableMapping

log = logging.getLogger(__name__)

SD_LISTEN_FDS_START = 3


class Notifier:
    """Datagrams to the service manager; silent when not run under one."""

    def __init__(self, address: str | None) -> None:
        self._address: str | bytes | None = None
        if address:
            self._address = b"\0" + address[1:].encode() if address.startswith("@") else address

    @classmethod
    def from_environ(cls, environ: MutableMapping[str, str]) -> Notifier:
        return cls(environ.pop("NOTIFY_SOCKET", None))

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def send(self, *fields: str) -> bool:
        """Send ``fields`` as one newline-joined message; False when nothing was sent."""
        if self._address is None:
            return False
        message = "\n".join(fields).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self._address)
                sock.sendall(message)
        except OSError as exc:
            log.warning("sd_notify failed: %s", exc)
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        fields = ["READY=1", f"MAINPID={os.getpid()}"]
        if status:
            fields.append(f"STATUS={status}")
        return self.send(*fields)

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")


def inherited_listener(environ: MutableMapping[str, str]) -> socket.socket | None:
    """The listening socket systemd handed us, or None when not socket-activated."""
    count_text = environ.get("LISTEN_FDS")
    if not count_text:
        return None
    pid_text = environ.get("LISTEN_PID")
    if pid_text and pid_text.isdigit() and int(pid_text) != os.getpid():
        log.warning("LISTEN_FDS meant for pid %s, not us; binding instead", pid_text)
        return None
    for name in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"):
        environ.pop(name, None)
    try:
        count = int(count_text)
    except ValueError:
        log.warning("LISTEN_FDS=%r is not a number; binding instead", count_text)
        return None
    if count < 1:
        return None
    if count > 1:
        log.warning("got %d inherited sockets; serving the first only", count)
    sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    sock.setblocking(False)
    return sock
