"""Where one version's bytes go, for ``status.memory``: records, their text, the lexical postings.

The figures are estimates from sizes the objects already know (string lengths, array
``nbytes``, ``sys.getsizeof`` of one record struct times the count), not a walk of every object:
a walk would cost more than the question is worth on a status call. Each version's figures are
computed once, on its first ask (~10 ms at 10,000 records), and kept beside it weakly, so a
status poll costs a dictionary lookup.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any, Final

from headd.head.indexes import Indexes
from headd.head.snapshot import PendingMap
from headd.wire.status_parts import PostingsFootprint, RecordsFootprint

#: Text fields whose characters dominate a record (the others are short strings and numbers);
#: ``disclosure`` is None where the disclosure text is the claim, which is then not a copy. The
#: body is counted as the bytes it is held in (deflated), beside.
_TEXT_FIELDS: Final = ("claim", "title")

#: What one ``Postings`` costs besides its arrays' data: the object and its range's two ints.
_BUCKET_OVERHEAD_BYTES: Final = 48 + 2 * 28

_KEPT: Final = 4
_lock = threading.Lock()
_kept: dict[int, tuple[weakref.ref[Indexes], tuple[RecordsFootprint, PostingsFootprint]]] = {}


def version_footprint(indexes: Indexes) -> tuple[RecordsFootprint, PostingsFootprint] | None:
    """The records' and the postings' figures of one version (cached per version); None while
    a snapshot decode still leaves its maps to be built (asking must not build them). A ``PMap``
    answers ``getattr`` with its keys, so pending maps are told by their type."""
    if any(
        isinstance(built, PendingMap) and built.pending
        for built in (indexes.records, indexes.lexical.postings)
    ):
        return None
    key = id(indexes)
    with _lock:
        entry = _kept.get(key)
        if entry is not None and entry[0]() is indexes:
            return entry[1]
    figures = (_records(indexes), _postings(indexes))
    with _lock:
        _kept[key] = (weakref.ref(indexes), figures)
        while len(_kept) > _KEPT:
            del _kept[next(iter(_kept))]
    return figures


def _records(indexes: Indexes) -> RecordsFootprint:
    records = indexes.records
    count = len(records)
    text = 0
    body = 0
    struct = 0
    for record in records.values():
        if not struct:
            struct = sys.getsizeof(record)
        for name in _TEXT_FIELDS:
            text += len(getattr(record, name))
        if record.disclosure is not None:
            text += len(record.disclosure)
        body += len(record.body_deflated)
    return RecordsFootprint(
        count=count, text_chars=text, body_deflated_bytes=body, struct_bytes=struct * count
    )


def _postings(indexes: Indexes) -> PostingsFootprint:
    postings = indexes.lexical.postings
    buckets = 0
    entries = 0
    data = 0
    for bucket in postings.values():
        buckets += 1
        entries += len(bucket)
        data += bucket.ids.nbytes + bucket.tfs.nbytes
    return PostingsFootprint(
        buckets=buckets, entries=entries, bytes=data + buckets * _BUCKET_OVERHEAD_BYTES
    )


def array_bytes(*holders: object) -> int:
    """The bytes of the distinct numpy arrays ``holders`` keep in their slots (a vector cache,
    a version matrix): every copy they hold counts, a view counts as the array it views, once."""
    seen: set[int] = set()
    total = 0
    for holder in holders:
        for name in getattr(type(holder), "__slots__", ()):
            owner: Any = getattr(holder, name, None)
            if not hasattr(owner, "nbytes") or not hasattr(owner, "base"):
                continue
            while hasattr(owner.base, "nbytes"):
                owner = owner.base
            if id(owner) not in seen:
                seen.add(id(owner))
                total += int(owner.nbytes)
    return total


def process_memory() -> dict[str, int | None]:
    """This process's VmRSS and VmHWM in bytes (``/proc/self/status``; None off Linux)."""
    out: dict[str, int | None] = {"rss_bytes": None, "peak_bytes": None}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    out["rss_bytes"] = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    out["peak_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out
