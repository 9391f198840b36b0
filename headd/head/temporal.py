"""Questions about time: "when did…" and "how long…" favour the memories that say when.

A question that asks when something happened is answered by the memory that places it ("last
Saturday", "two years ago", "in July", a ``<time>`` in its article), and those words are not in
the question, so neither arm sees them: BM25 matches what the question names, the cosine what it
is about. The hybrid search adds :data:`TIME_BONUS` to the fused score of each candidate that
tells a time when the query asks one (docs/design/search-quality.md).

Only the candidates the arms already hold are looked at, and only for a question that asks when:
each candidate's words against :data:`TIME_WORDS`, remembered by content hash.

Pure: functions of the query and a record; the one state, a record's verdict by content hash,
changes no result.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from headd.head.tokens import tokenize
from headd.record import MemoryRecord

#: What the hybrid search adds to a candidate that tells a time, for a question asking one:
#: chosen by leave-one-out over LoCoMo's development conversations (docs/design/search-quality.md).
TIME_BONUS: Final = 0.3

_ASKS_WHEN: Final = re.compile(r"\s*(?:when|how long)\b", re.IGNORECASE)

#: Words that place a memory in time: relative days and spans, weekdays, months, seasons; a
#: four-digit number (a year) counts too.
TIME_WORDS: Final = frozenset((
    "yesterday", "today", "tonight", "tomorrow", "last", "ago", "next", "since", "recently",
    "morning", "evening", "night", "week", "weekend", "weeks", "month", "months", "year", "years",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "summer", "winter", "spring", "fall",
))  # fmt: skip

#: Whether a memory tells a time, by content hash (the article's digest: the ``<time>`` and every
#: word are in it), for the most recently asked: a candidate of one question about time is a
#: candidate of the next, and its article is inflated and read once.
_TOLD: OrderedDict[str, bool] = OrderedDict()
_TOLD_SIZE: Final = 1 << 14
_TOLD_LOCK: Final = threading.Lock()


def asks_when(query: str) -> bool:
    """Whether ``query`` asks when something happened or how long it lasted."""
    return _ASKS_WHEN.match(query) is not None


def tells_time(record: MemoryRecord) -> bool:
    """Whether ``record`` places what it says in time: a ``<time>`` or a word of time in its
    article. The whole article, not the claim alone: a memory of a whole conversation whose
    first line happens to name a day says no more about when than the others, which name days
    further down (docs/design/search-quality.md)."""
    if record.event_at is not None:
        return True
    key = record.content_hash
    with _TOLD_LOCK:
        told = _TOLD.get(key)
    if told is None:
        told = _says_time(record.claim) or _says_time(record.body_text)
        with _TOLD_LOCK:
            _TOLD[key] = told
            while len(_TOLD) > _TOLD_SIZE:
                _TOLD.popitem(last=False)
    return told


def _says_time(text: str) -> bool:
    return any(word in TIME_WORDS or (len(word) == 4 and word.isdigit()) for word in tokenize(text))


def favour_times(
    query: str, fused: dict[str, float], record_of: Callable[[str], MemoryRecord | None]
) -> dict[str, float]:
    """``fused`` (path -> score) with :data:`TIME_BONUS` added to each path whose record tells a
    time, when ``query`` asks when; otherwise ``fused`` itself."""
    if not asks_when(query):
        return fused
    favoured = dict(fused)
    for path in fused:
        record = record_of(path)
        if record is not None and tells_time(record):
            favoured[path] += TIME_BONUS
    return favoured
