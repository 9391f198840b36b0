"""Conversation threads in a ranking: a turn borrows from the best-scored turn of its session.

A conversation kept as one memory per turn answers a question across turns: the turn that holds
the answer ("yes, last Tuesday") often shares few words with the question, while the turn beside
it, which asked, shares many. The hybrid search lifts each candidate toward the best fused score
among the candidates of its thread, by :data:`THREAD_LIFT` of the gap
(docs/design/search-quality.md):

    score' = score + THREAD_LIFT * (best score in the thread - score)

A thread is what the memory says of itself, not a convention of whoever wrote it: the episodic
memories of one folder that share a moment (the event time, else the creation time), as the
turns of one session do. A semantic or procedural memory, or one with no moment, is a thread of
its own, so its score is unchanged; so is the best record of every thread, so the top hit never
moves down. Only the candidates the two arms already hold are grouped: no index, no record
outside them, a few microseconds a query.

Pure: a function of the fused scores and the records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from headd.record import MemoryRecord

#: How far a candidate moves toward its thread's best score: chosen by leave-one-out over
#: LoCoMo's development conversations (each rotation picks it on the other two;
#: docs/design/search-quality.md).
THREAD_LIFT: Final = 0.6

#: The memory type whose records form threads: memhtml's "what happened" memories.
EPISODIC: Final = "episodic"


def thread_of(record: MemoryRecord) -> tuple[str, str] | None:
    """``record``'s thread, (folder, moment), or None when it belongs to none."""
    if record.memory_type != EPISODIC:
        return None
    moment = record.event_at or record.created_at
    if moment is None:
        return None
    folder, _, _name = record.path.rpartition("/")
    return folder, moment


def lift_threads(
    fused: dict[str, float], record_of: Callable[[str], MemoryRecord | None]
) -> dict[str, float]:
    """``fused`` (path -> score) with each path's score lifted toward its thread's best by
    :data:`THREAD_LIFT`; a path with no record or no thread keeps its score. Never lowers a
    score, and the best of each thread keeps its own."""
    threads: dict[str, tuple[str, str]] = {}
    best: dict[tuple[str, str], float] = {}
    for path, score in fused.items():
        record = record_of(path)
        key = None if record is None else thread_of(record)
        if key is None:
            continue
        threads[path] = key
        if score > best.get(key, float("-inf")):
            best[key] = score
    if not threads:
        return fused
    lifted = dict(fused)
    for path, key in threads.items():
        score = fused[path]
        lifted[path] = score + THREAD_LIFT * (best[key] - score)
    return lifted
