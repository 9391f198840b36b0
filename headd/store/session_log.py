"""Append-only JSON-lines session logs under ``<store>/.memhtml/headd/sessions/``.

One file per session, ``<id>.jsonl``, one event per line (``sessions.Event``), each line written
with a single ``write`` before the call that wrote it returns, so a session the daemon answered
for survives a killed process or a restart; the caller says which lines are also ``fsync``ed
against a power cut (the manager: only a commit's intent, docs/design/store.md). A line cut short by a crash (no final newline,
or JSON that does not decode) can only be the last one; it is dropped and the file truncated back
to the last whole line, so the next append starts clean.

A closed session's log is removed: there is nothing left in it to recover.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import msgspec

from headd.store import disk
from headd.store.sessions import Event, check_session_id

log = logging.getLogger(__name__)

SESSIONS_DIR = Path(".memhtml") / "headd" / "sessions"
SUFFIX = ".jsonl"

_encode = msgspec.json.Encoder().encode
_decode_event = msgspec.json.Decoder(Event).decode


def sessions_dir(store: Path) -> Path:
    return store / SESSIONS_DIR


class SessionLog:
    """The log directory of one store."""

    def __init__(self, store: Path) -> None:
        self.dir = sessions_dir(store)

    def path_of(self, session_id: str) -> Path:
        return self.dir / f"{check_session_id(session_id)}{SUFFIX}"

    def exists(self, session_id: str) -> bool:
        return self.path_of(session_id).exists()

    def append(self, session_id: str, *events: Event, durable: bool = True) -> None:
        """Append events in one write, then fsync unless ``durable`` is False: for an event
        whose loss to a power cut loses no landed write (the next durable append or compaction
        carries it to disk with the rest)."""
        data = b"".join(_encode(event) + b"\n" for event in events)
        path = self.path_of(session_id)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise disk.storage_failure(
                f"writing the log of session {session_id} failed", exc
            ) from exc

    def read(self, session_id: str) -> list[Event]:
        """Every whole event in order; a torn tail is dropped and truncated away."""
        path = self.path_of(session_id)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise disk.storage_failure(
                f"reading the log of session {session_id} failed", exc
            ) from exc
        events: list[Event] = []
        good = 0
        pos = 0
        while pos < len(raw):
            end = raw.find(b"\n", pos)
            if end == -1:
                break
            try:
                events.append(_decode_event(raw[pos:end]))
            except msgspec.DecodeError:
                break
            pos = end + 1
            good = pos
        if good != len(raw):
            log.warning(
                "session %s: dropped a torn last line (%d bytes)", session_id, len(raw) - good
            )
            try:
                with open(path, "r+b") as fh:
                    fh.truncate(good)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise disk.storage_failure(
                    f"repairing the log of session {session_id} failed", exc
                ) from exc
        return events

    def rewrite(self, session_id: str, *events: Event) -> None:
        """Replace the log with ``events`` atomically (temp file, fsync, rename, fsync dir).

        Used to compact a log once its ops have landed: a reader sees the old log or the new
        one, never a mix.
        """
        path = self.path_of(session_id)
        tmp = path.with_name(path.name + ".tmp")
        data = b"".join(_encode(event) + b"\n" for event in events)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            dir_fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise disk.storage_failure(
                f"compacting the log of session {session_id} failed", exc
            ) from exc

    def ids(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.name[: -len(SUFFIX)] for p in self.dir.glob(f"*{SUFFIX}"))

    def remove(self, session_id: str) -> None:
        try:
            self.path_of(session_id).unlink(missing_ok=True)
        except OSError as exc:
            raise disk.storage_failure(
                f"removing the log of session {session_id} failed", exc
            ) from exc
