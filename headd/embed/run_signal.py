"""A query's worker thread tells the event loop that its model call has begun.

An unseen query's hybrid search waits on the model, which runs without the GIL; the event loop
can rank the search's lexical arm meanwhile, but only once the worker is inside the model call:
a loop that starts Python work at once keeps the GIL, and the worker waits for it (up to the
interpreter's 5 ms switch interval) before it can even tokenize. So the worker runs inside
:func:`signalling`, the embedder calls :func:`model_call_begins` right before its model runs,
and the loop waits for the event (a bounded wait, the GIL released) before its own work. Every
way out of the worker (a cached answer, a failure) sets the event too, so no waiter is left on
it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCAL = threading.local()


@contextmanager
def signalling(event: threading.Event) -> Iterator[None]:
    """Within the block, this thread's model call sets ``event``; leaving sets it anyway."""
    _LOCAL.event = event
    try:
        yield
    finally:
        _LOCAL.event = None
        event.set()


def model_call_begins() -> None:
    """Called by an embedder on the calling thread right before the model runs."""
    event: threading.Event | None = getattr(_LOCAL, "event", None)
    if event is not None:
        event.set()
