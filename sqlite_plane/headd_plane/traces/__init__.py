"""The trace plane: an incremental index of Claude Code transcripts in ``index.db``.

Public entry points (the daemon's ``traces.*`` methods and ``headctl traces`` call these):

- ``traces_index(conn, root, now)`` — scan a transcript root (``default_trace_root``);
- ``traces_search(conn, query, limit)`` — sessions by their first prompt and title;
- ``traces_show(conn, session_id)`` — one session with prompts, linked memories and files.
"""

from headd_plane.traces.scan import IndexReport, default_trace_root, traces_index
from headd_plane.traces.search import traces_search, traces_show

__all__ = [
    "IndexReport",
    "default_trace_root",
    "traces_index",
    "traces_search",
    "traces_show",
]
