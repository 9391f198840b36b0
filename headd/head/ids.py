"""Stable integer ids for paths, and the UTF-16 sort key of each.

The lexical index keeps each token's postings as compact numpy arrays of document ids, so a path
needs a small integer that never changes. The ids live in one append-only table per process,
shared by every version and overlay: a path keeps its id across versions, a version loaded from
scratch and one built by advancing number their documents identically (so their buckets compare
by value), and an old version never sees an id reassigned under it. A path that leaves the corpus
keeps its id; the table grows with the distinct paths the process has seen, which for a memory
store is its history of file names.

Paths (and times) are ordered as JavaScript orders strings, by UTF-16 code units, because that is
the order memhtml's head answers in. That differs from Python's code-point order only for
characters outside the Basic Multilingual Plane, so :func:`utf16_key` returns the string itself
unless it holds one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _surrogates(match: re.Match[str]) -> str:
    code = ord(match.group(0)) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def utf16_key(text: str) -> str:
    """A key that sorts as the UTF-16 code units of ``text`` (JavaScript's string order)."""
    if text.isascii() or _ASTRAL.search(text) is None:
        return text
    return _ASTRAL.sub(_surrogates, text)


def utf16_sorted(items: list[str] | set[str] | frozenset[str] | tuple[str, ...]) -> list[str]:
    """``items`` sorted ascending by UTF-16 code units, as JavaScript's default sort does."""
    return sorted(items, key=utf16_key)


class PathIds:
    """An append-only path <-> id table. Thread-safe for interning; reads need no lock."""

    __slots__ = ("_by_path", "_keys", "_lock", "_paths")

    def __init__(self) -> None:
        self._by_path: dict[str, int] = {}
        self._paths: list[str] = []
        self._keys: list[str] = []
        self._lock = threading.Lock()

    def intern(self, path: str) -> int:
        """The id of ``path``, assigning the next one the first time it is seen."""
        found = self._by_path.get(path)
        if found is not None:
            return found
        with self._lock:
            found = self._by_path.get(path)
            if found is None:
                found = len(self._paths)
                self._paths.append(path)
                self._keys.append(utf16_key(path))
                self._by_path[path] = found
            return found

    def intern_many(self, paths: Iterable[str]) -> list[int]:
        """The id of each of ``paths``, in order, as :meth:`intern` gives them, under one lock: a
        snapshot decode numbers every path of the store at once (10^5 at 100,000 memories), where
        a call and a lock per path would be most of what the decode does besides msgpack."""
        out: list[int] = []
        append = out.append
        by_path, paths_by_id, keys = self._by_path, self._paths, self._keys
        with self._lock:
            for path in paths:
                found = by_path.get(path)
                if found is None:
                    found = len(paths_by_id)
                    paths_by_id.append(path)
                    keys.append(utf16_key(path))
                    by_path[path] = found
                append(found)
        return out

    def lookup(self, path: str) -> int | None:
        return self._by_path.get(path)

    def path(self, ident: int) -> str:
        return self._paths[ident]

    def key(self, ident: int) -> str:
        """The UTF-16 sort key of the path with this id."""
        return self._keys[ident]

    def __len__(self) -> int:
        return len(self._paths)


#: The process-wide table (see the module docstring for why there is one).
PATH_IDS = PathIds()
