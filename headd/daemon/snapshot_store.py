"""Where head snapshots live: one file per commit under ``<store>/.memhtml/headd/snapshots/``.

A snapshot (``headd.head.snapshot``) is megabytes at 10,000 memories. A sidecar file
reads in a third of the time a blob row of ``index.db`` takes and writes several times faster
(the WAL writes a row twice, the write holds the plane's one writer lock, and a deleted row
leaves free pages until a VACUUM; docs/design/coldstart.md has the measurement). So snapshots
are files beside ``index.db``, not rows in it.

Each file is ``<sha>.snap``, written to a temporary name in the same directory, fsynced, then
renamed over (a reader sees a whole file or none), and the directory is fsynced. Only the newest
``keep`` files (by modification time) are kept, one by default: a cold start uses the newest
snapshot of an ancestor of the tip, which is the newest one written unless the ref moved back, and
a store that keeps two pays twice the disk for that rare case (it costs one git load). Nothing
here interprets the bytes.

A snapshot is trusted only when this daemon wrote it: each file ends in a keyed digest
(BLAKE2b, ``MAC_BYTES``) of its commit's sha and its bytes, under a random key that lives in the
store's git directory (``<git dir>/headd/snapshot.key``, mode 0600), which no checkout writes and
no push carries. A file that was pushed, copied from another store, renamed to another commit or
written by older code fails the check, and the cold start loads from git instead: the work tree
is written from what others push, so its bytes alone are never evidence of anything.

The cold start reads a snapshot through :meth:`SnapshotStore.mapped` (a read-only memory map):
reading the whole file into a ``bytes`` and freeing it costs more CPU than mapping the page cache,
and the decoder copies out everything it keeps, so the mapping is closed right after the decode.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import mmap
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from headd.errors import StorageFailure

log = logging.getLogger(__name__)

SNAPSHOT_DIR: Final = Path(".memhtml") / "headd" / "snapshots"
SUFFIX: Final = ".snap"
DEFAULT_KEEP: Final = 1
_SHA: Final = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
#: Bytes of the keyed digest every file ends in.
MAC_BYTES: Final = 32
KEY_BYTES: Final = 32
_NOT_OURS: Final = (
    "a head snapshot whose keyed checksum does not match (damaged, or not written by this daemon)"
)


def _git_dir(store: Path) -> Path | None:
    """The store's own git directory (``.git``, or where a ``.git`` file points), if any."""
    dot = store / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot
    try:
        text = dot.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("gitdir: "):
        target = Path(text[len("gitdir: ") :].strip())
        return target if target.is_absolute() else store / target
    return None


def key_path_of(store: Path) -> Path:
    """Where the snapshot key lives: the git directory, which no checkout writes; a store that
    is no repository (a test's bare directory) keeps it beside the snapshots."""
    git_dir = _git_dir(store)
    return (git_dir / "headd" if git_dir else snapshot_dir_of(store).parent) / "snapshot.key"


def _load_key(path: Path, *, create: bool) -> bytes | None:
    """The key at ``path``; made (random, 0600) when ``create`` and there is none yet."""
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_bytes()
        key = os.urandom(KEY_BYTES)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
        return key
    return key if len(key) == KEY_BYTES else None


def _mac(key: bytes, sha: str, data: bytes | memoryview) -> bytes:
    digest = hashlib.blake2b(key=key, digest_size=MAC_BYTES)
    digest.update(sha.encode("ascii"))
    digest.update(data)
    return digest.digest()


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One stored snapshot: its commit, its file, when it was written (ns), its size."""

    sha: str
    path: Path
    written_ns: int
    size: int


def snapshot_dir_of(store: Path) -> Path:
    return store / SNAPSHOT_DIR


class SnapshotStore:
    """The snapshot files of one store."""

    def __init__(self, store: Path, *, keep: int = DEFAULT_KEEP) -> None:
        self.directory = snapshot_dir_of(store)
        self.keep = max(1, keep)
        self.key_path = key_path_of(store)

    def _payload(self, sha: str, whole: memoryview) -> memoryview:
        """``whole`` without its digest; StorageFailure when the digest is not this store's."""
        key = _load_key(self.key_path, create=False)
        if key is None or len(whole) < MAC_BYTES:
            raise StorageFailure(_NOT_OURS, {"sha": sha})
        payload = whole[: len(whole) - MAC_BYTES]
        if not hmac.compare_digest(_mac(key, sha, payload), bytes(whole[len(payload) :])):
            payload.release()
            raise StorageFailure(_NOT_OURS, {"sha": sha})
        return payload

    def path_of(self, sha: str) -> Path:
        if not _SHA.match(sha):
            raise ValueError(f"not a commit sha: {sha!r}")
        return self.directory / f"{sha}{SUFFIX}"

    def entries(self) -> list[SnapshotEntry]:
        """Every stored snapshot, newest first (ties by name, so the order is stable)."""
        found: list[SnapshotEntry] = []
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot list head snapshots in %s: %s", self.directory, exc)
            return []
        for name in names:
            sha = name[: -len(SUFFIX)]
            if not name.endswith(SUFFIX) or not _SHA.match(sha):
                continue
            path = self.directory / name
            try:
                stat = path.stat()
            except OSError:
                continue  # removed meanwhile
            found.append(SnapshotEntry(sha, path, stat.st_mtime_ns, stat.st_size))
        found.sort(key=lambda e: (-e.written_ns, e.sha))
        return found

    def has(self, sha: str) -> bool:
        return self.path_of(sha).is_file()

    def read(self, sha: str) -> bytes | None:
        """The snapshot of ``sha``, or None when there is none. StorageFailure when unreadable
        or not written by this store's daemon."""
        try:
            whole = self.path_of(sha).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageFailure("cannot read a head snapshot", {"sha": sha}) from exc
        with memoryview(whole) as view, self._payload(sha, view) as payload:
            return bytes(payload)

    @contextlib.contextmanager
    def mapped(self, sha: str) -> Iterator[memoryview | None]:
        """The snapshot of ``sha`` as a read-only view of its file mapped into memory (None when
        there is none), valid inside the ``with``: release every view taken from it before the
        block ends. StorageFailure when it cannot be opened or mapped."""
        path = self.path_of(sha)
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below, before the mapping is used
        except FileNotFoundError:
            yield None
            return
        except OSError as exc:
            raise StorageFailure("cannot read a head snapshot", {"sha": sha}) from exc
        try:
            with fh:
                if os.fstat(fh.fileno()).st_size == 0:
                    mapping = None
                else:
                    mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise StorageFailure("cannot map a head snapshot", {"sha": sha}) from exc
        if mapping is None:
            raise StorageFailure(_NOT_OURS, {"sha": sha})
        try:
            with memoryview(mapping) as view, self._payload(sha, view) as payload:
                yield payload
        finally:
            mapping.close()

    def write(self, sha: str, data: bytes) -> SnapshotEntry:
        """Store ``data`` as the snapshot of ``sha`` atomically, then keep only the newest few."""
        target = self.path_of(sha)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=self.directory)
            try:
                key = _load_key(self.key_path, create=True)
                assert key is not None
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.write(_mac(key, sha, data))
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(temporary, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            _fsync_dir(self.directory)
            stat = target.stat()
        except OSError as exc:
            raise StorageFailure("cannot write a head snapshot", {"sha": sha}) from exc
        self.prune()
        return SnapshotEntry(sha, target, stat.st_mtime_ns, stat.st_size)

    def remove(self, sha: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path_of(sha).unlink()

    def prune(self) -> list[str]:
        """Drop all but the newest ``keep`` snapshots (and stale temporary files)."""
        removed = []
        for entry in self.entries()[self.keep :]:
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()
                removed.append(entry.sha)
        with contextlib.suppress(OSError):
            for name in os.listdir(self.directory):
                if name.startswith(".tmp-"):
                    with contextlib.suppress(OSError):
                        (self.directory / name).unlink()
        return removed


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
