"""Where the plane's files live, in a module of its own so that naming them imports nothing.

The daemon names ``index.db`` and ``state.db`` in its first ``status`` answer and in its vector
store, before it opens the plane; importing ``headd_plane.plane`` for that would load the
indexer, retrieval and recall on the way to READY (within 0.5 s at 10,000 memories).
"""

from __future__ import annotations

from pathlib import Path

PLANE_DIR = Path(".memhtml") / "headd"


def index_path_of(store: Path | str) -> Path:
    return Path(store) / PLANE_DIR / "index.db"


def state_path_of(store: Path | str) -> Path:
    return Path(store) / PLANE_DIR / "state.db"
