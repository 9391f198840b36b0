"""Agent sessions and the commit path: overlays that land on the branch with a compare-and-swap.

The daemon uses ``SessionManager`` (``manager.py``); everything it answers is a msgspec Struct
from ``results.py``. Modules, one concept each:

- ``sessions``: a session as a value, folded from its events (pure).
- ``session_log``: those events as durable JSON lines under ``.memhtml/headd/sessions/``.
- ``validate``: judging ops against one version (pure, given the overlay).
- ``resolve``: ``write`` → ``put`` and archive defaults, before anything is judged.
- ``commit``: the commit path, in the order docs/design/store.md gives.
- ``recovery``: settling a commit interrupted after its intent.
- ``git_io``: the pygit2 writes, the ref compare-and-swap and the checkout.
- ``versions``: the default source of versions (the daemon passes its own).
"""

from headd.store.manager import SessionManager
from headd.store.results import (
    ApplyResult,
    CloseResult,
    CommitResult,
    ListResult,
    OpenResult,
    RebaseResult,
    SessionInfo,
    Settlement,
    Violation,
)

__all__ = [
    "ApplyResult",
    "CloseResult",
    "CommitResult",
    "ListResult",
    "OpenResult",
    "RebaseResult",
    "SessionInfo",
    "SessionManager",
    "Settlement",
    "Violation",
]
