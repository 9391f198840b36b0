"""What the search learns about one version's documents as it goes, so it is learnt once.

A lexical search admits its candidates one record at a time: a record lookup in the version's
persistent map and a call of the scope's predicate, each a few microseconds of Python, for some
forty candidates a query. Both answers are pure functions of the version (immutable) and of the
scope (a frozen value), so they are kept:

- per version, the record of each path id once looked up (a list by id);
- per (version, scope), each document's answer in an ``int8`` array by id: ``-1`` not asked
  yet, ``0`` refused (or no such record), ``1`` admitted.

These are facts about documents, never a query's result: every query is still scored and ranked
in full. A memo holds its version weakly (by its ``Indexes``); the few most recent versions are
kept, and the few most recent scopes of each. Searches on the event loop and on the gate's thread
share the memos: the lock guards the tables, and two threads learning the same answer write the
same value.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Final

import numpy as np
from numpy.typing import NDArray

from headd.head.scope import Scope
from headd.record import MemoryRecord

UNKNOWN: Final = -1
REFUSED: Final = 0
ADMITTED: Final = 1

Answers = NDArray[np.int8]


class VersionMemo:
    """One version's memo: records by path id, and each memoized scope's answers."""

    __slots__ = ("_owner", "_scopes", "records", "size")

    SCOPES_KEPT: Final = 8

    def __init__(self, owner: object, size: int) -> None:
        self._owner = weakref.ref(owner)
        self.size = size
        #: The record at each path id once looked up; None when not looked up (or absent).
        self.records: list[MemoryRecord | None] = [None] * size
        self._scopes: OrderedDict[Scope, Answers] = OrderedDict()

    def belongs_to(self, owner: object) -> bool:
        return self._owner() is owner

    def answers(self, scope: Scope) -> Answers:
        """The answers of ``scope`` learnt so far (a new, all-unknown array the first time)."""
        found = self._scopes.get(scope)
        if found is None:
            found = np.full(self.size, UNKNOWN, dtype=np.int8)
            self._scopes[scope] = found
            while len(self._scopes) > self.SCOPES_KEPT:
                self._scopes.popitem(last=False)
        else:
            self._scopes.move_to_end(scope)
        return found


class SearchMemos:
    """The memos of the few most recently searched versions."""

    def __init__(self, capacity: int = 8) -> None:
        self._capacity = capacity
        self._memos: OrderedDict[int, VersionMemo] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, owner: object, size: int, scope: Scope) -> tuple[VersionMemo, Answers]:
        """The memo of ``owner`` (ids below ``size``) and ``scope``'s answers in it."""
        key = id(owner)
        with self._lock:
            memo = self._memos.get(key)
            if memo is None or not memo.belongs_to(owner) or memo.size < size:
                memo = VersionMemo(owner, size)
                self._memos[key] = memo
                while len(self._memos) > self._capacity:
                    self._memos.popitem(last=False)
            else:
                self._memos.move_to_end(key)
            return memo, memo.answers(scope)


def memoizable_scope(admit: object) -> Scope | None:
    """The :class:`Scope` behind ``admit`` (the scope itself or its bound ``admit``) when its
    answers may be kept: a plain Scope (a subclass may answer otherwise) that hashes."""
    if type(admit) is not Scope:
        owner = getattr(admit, "__self__", None)
        if type(owner) is not Scope or getattr(admit, "__func__", None) is not Scope.admit:
            return None
        admit = owner
    try:
        hash(admit)
    except TypeError:
        return None
    return admit


#: The process's memos.
SEARCH_MEMOS: Final = SearchMemos()
