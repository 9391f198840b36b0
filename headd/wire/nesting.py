"""How deep a JSON text nests, bounded before any decoder sees it.

msgspec's decoder recurses once per array or object level and raises ``RecursionError`` near
Python's recursion limit (a line of ``[`` * 1000 is enough), which no ``DecodeError`` handler
catches. A line nested deeper than ``MAX_DEPTH`` is answered as an invalid request instead; no
message of the contract nests deeper than a handful of levels.

The check costs two ``bytes.count`` passes on an ordinary line: only a line holding more opening
brackets than ``MAX_DEPTH`` is looked at closer. Then string contents are cut out (brackets inside
a string do not nest), everything but brackets is dropped, and the depth is the running sum of +1
per opening and -1 per closing bracket, taken by numpy so that even an 8 MiB line of brackets is
judged without a Python loop over its bytes. The sum counts an opening bracket that is never
closed, as the decoder recurses on it all the same.
"""

from __future__ import annotations

import re

MAX_DEPTH = 64
"""The deepest array/object nesting a line may have (a request needs about five levels)."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_AS_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def nesting_depth(text: bytes) -> int:
    """The deepest level of arrays and objects in ``text`` (JSON, possibly malformed)."""
    import numpy as np

    steps = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS).translate(_AS_STEPS)
    if not steps:
        return 0
    return max(0, int(np.cumsum(np.frombuffer(steps, dtype=np.int8), dtype=np.int64).max()))


def nests_deeper_than(text: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when some array or object in ``text`` sits more than ``limit`` levels deep."""
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    return nesting_depth(text) > limit
