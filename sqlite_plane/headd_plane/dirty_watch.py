"""Which work-tree paths may have changed since the last look: Linux inotify, through ctypes.

A full ``git status`` lstat()s every tracked file, which alone takes most of the 50 ms a
one-file index update may take at 10,000 memories. A long-lived process can instead be told by the
kernel which paths were touched, and ask git about those only. :class:`DirtyWatch` holds one
inotify descriptor with a watch on every directory of the work tree (never inside ``.git``,
whose own directory is watched alone, for its ``index`` and ``config``) and collects, between two
:meth:`DirtyWatch.take` calls, the paths touched.

It never blocks and runs no thread: the kernel queues the events and :meth:`take` drains them on
the caller's thread. Whenever the collected set might miss something it answers ``None``
("unknown"), and the caller does the full scan as before: at its start (a watch may land after an
edit), after a queue overflow, a moved directory, a changed ignore, attribute or config file, a
nested repository, an unreadable event, or a failed watch. Overflow, a moved directory and a
vanished root first re-create every watch; a watch limit (``max_user_watches``) or any other
failure to watch turns it off for good, leaving the full scan.

The module lives in the plane beside :mod:`headd_plane.gitsource`, its one consumer; the daemon
only starts and closes it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

#: What a work-tree directory is watched for: any change of an entry's content, mode or name.
TREE_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
)
#: ``.git`` and ``.git/info``: a file replaced (lock, then rename) or rewritten in place.
GIT_DIR_MASK = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY | IN_ONLYDIR

#: Work-tree names whose change can alter the status of paths other than their own.
RULE_FILES = frozenset({".gitignore", ".gitattributes"})
#: In ``.git``: the staging area (its change is reported), and what makes the rest unknown.
GIT_INDEX = "index"
GIT_CONFIG = "config"
GIT_INFO = "info"
#: In ``.git/info``.
GIT_INFO_RULE_FILES = frozenset({"exclude", "attributes", "sparse-checkout"})

EVENT_HEADER = struct.Struct("iIII")
READ_SIZE = 1 << 16


@dataclass(frozen=True, slots=True)
class Touched:
    """What changed since the last :meth:`DirtyWatch.take`: work-tree paths (files, relative,
    ``/``-separated; a path may be gone again) and whether git's index file was rewritten."""

    paths: frozenset[str] = field(default_factory=frozenset)
    index_changed: bool = False


class WatchUnavailable(Exception):
    """No inotify here (not Linux, no libc symbol), or it refused to start."""


class _Rewatch(Exception):
    """The watch set may be stale (overflow, a moved directory): re-create every watch."""


class _Inotify:
    """The three libc calls, bound once."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise WatchUnavailable(f"inotify needs Linux, not {sys.platform}")
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            self.init1: Any = libc.inotify_init1
            self.add_watch: Any = libc.inotify_add_watch
        except (OSError, AttributeError) as error:
            raise WatchUnavailable(f"no inotify in libc: {error}") from None
        self.init1.argtypes = [ctypes.c_int]
        self.init1.restype = ctypes.c_int
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add_watch.restype = ctypes.c_int

    def open(self) -> int:
        fd = int(self.init1(IN_NONBLOCK | IN_CLOEXEC))
        if fd < 0:
            code = ctypes.get_errno()
            raise WatchUnavailable(f"inotify_init1: {os.strerror(code)}")
        return fd


class DirtyWatch:
    """The paths touched in one work tree since the last :meth:`take` (not thread-safe: one
    caller, the plane's writer thread)."""

    def __init__(self, workdir: Path, gitdir: Path) -> None:
        self.workdir = workdir
        self.gitdir = gitdir
        self._inotify = _Inotify()
        self._fd = -1
        self._dirs: dict[int, str] = {}  # wd -> work-tree directory ("" is the root)
        self._git_wd = -1
        self._info_wd = -1
        self._paths: set[str] = set()
        self._index_changed = False
        self._unknown = True  # until the first take: a watch may have landed after an edit
        self._off = False
        try:
            self._watch_all()
        except BaseException:
            self._close_fd()
            raise

    @property
    def active(self) -> bool:
        return not self._off

    # -- watches --------------------------------------------------------------------------------

    def _watch_all(self) -> None:
        """A fresh descriptor watching ``.git``, ``.git/info`` and every work-tree directory."""
        self._close_fd()
        self._fd = self._inotify.open()
        self._dirs = {}
        self._git_wd = self._add(self.gitdir, GIT_DIR_MASK, required=True)
        self._info_wd = self._add(self.gitdir / "info", GIT_DIR_MASK, required=False)
        self._watch_tree("", collect=False)

    def _add(self, path: Path, mask: int, required: bool) -> int:
        """A watch on ``path``; -1 when it vanished first (unless ``required``). A watch limit
        or any other refusal raises :class:`WatchUnavailable`."""
        wd = int(self._inotify.add_watch(self._fd, os.fsencode(path), mask))
        if wd >= 0:
            return wd
        code = ctypes.get_errno()
        if code in (errno.ENOENT, errno.ENOTDIR) and not required:
            return -1
        hint = " (fs.inotify.max_user_watches)" if code == errno.ENOSPC else ""
        raise WatchUnavailable(f"inotify_add_watch {path}: {os.strerror(code)}{hint}")

    def _watch_tree(self, top: str, collect: bool) -> None:
        """Watch ``top`` and every directory below it (the watch before the listing, so an
        entry made in between is an event or a listed name); with ``collect``, every file
        found is a touched path (a directory made, or moved in, with files already inside)."""
        pending = [top]
        while pending:
            rel = pending.pop()
            # the root may be reached through a symlink; below it, git does not follow them
            mask = TREE_MASK if rel else TREE_MASK & ~IN_DONT_FOLLOW
            wd = self._add(self.workdir / rel if rel else self.workdir, mask, required=not rel)
            if wd < 0:
                continue
            self._dirs[wd] = rel
            try:
                entries = list(os.scandir(self.workdir / rel if rel else self.workdir))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                name = entry.name
                child = f"{rel}/{name}" if rel else name
                if name == ".git":
                    if rel:  # a nested repository: git reports it as one entry, we cannot
                        raise WatchUnavailable(f"nested repository at {rel}")
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(child)
                elif collect:
                    self._paths.add(child)

    def _close_fd(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        """Release the descriptor (and with it every watch); later takes answer unknown."""
        self._close_fd()
        self._off = True

    def _turn_off(self, why: str) -> None:
        log.warning("work-tree watch off, every update scans the whole tree: %s", why)
        self.close()

    # -- events ---------------------------------------------------------------------------------

    def take(self) -> Touched | None:
        """What was touched since the last take, or None when that is unknown (the caller
        scans everything). Either way the slate is clean afterwards: an event arriving from
        now on belongs to the next take, so a full scan started after this call misses none."""
        if self._off:
            return None
        try:
            self._drain()
        except _Rewatch as why:
            log.info("work-tree watch re-created: %s", why)
            self._unknown = True
            try:
                self._watch_all()
            except (WatchUnavailable, OSError) as error:
                self._turn_off(str(error))
                return None
        except (WatchUnavailable, OSError) as error:
            self._turn_off(str(error))
            return None
        touched = None if self._unknown else Touched(frozenset(self._paths), self._index_changed)
        self._paths = set()
        self._index_changed = False
        self._unknown = False
        return touched

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                return
            if not data:
                return
            offset = 0
            while offset + EVENT_HEADER.size <= len(data):
                wd, mask, _cookie, size = EVENT_HEADER.unpack_from(data, offset)
                start = offset + EVENT_HEADER.size
                raw = data[start : start + size].split(b"\0", 1)[0]
                offset = start + size
                self._event(wd, mask, os.fsdecode(raw))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            raise _Rewatch("the event queue overflowed")
        if wd == self._git_wd:
            if name == GIT_INDEX:
                self._index_changed = True
            elif name == GIT_CONFIG:
                self._unknown = True
            elif name == GIT_INFO:
                raise _Rewatch(".git/info came or went")
            if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
                raise _Rewatch(".git itself changed")
            return
        if wd == self._info_wd:
            if name in GIT_INFO_RULE_FILES:
                self._unknown = True
            if mask & IN_IGNORED:
                self._info_wd = -1
            return
        rel = self._dirs.get(wd)
        if rel is None:
            if mask & IN_IGNORED:
                return  # a watch replaced by a re-creation
            raise _Rewatch(f"an event for an unknown watch {wd}")
        if mask & IN_IGNORED:
            del self._dirs[wd]
            if not rel:
                raise _Rewatch("the work tree's root went away")
            return
        if mask & (IN_MOVE_SELF | IN_UNMOUNT) and not rel:
            raise _Rewatch("the work tree's root moved")
        if not name:
            return  # about the directory itself: its entries tell what changed
        path = f"{rel}/{name}" if rel else name
        if name == ".git":
            if rel:
                raise WatchUnavailable(f"nested repository at {rel}")
            return
        if name in RULE_FILES:
            self._unknown = True
        if mask & IN_ISDIR:
            if mask & IN_MOVED_FROM:
                raise _Rewatch(f"directory {path} moved away")
            if mask & (IN_CREATE | IN_MOVED_TO):
                self._watch_tree(path, collect=True)
            return
        self._paths.add(path)


def start_watch(workdir: Path, gitdir: Path) -> DirtyWatch | None:
    """A running watch, or None (logged) where inotify cannot serve."""
    try:
        return DirtyWatch(workdir, gitdir)
    except (WatchUnavailable, OSError) as error:
        log.warning("work-tree watch unavailable, every update scans the whole tree: %s", error)
        return None
