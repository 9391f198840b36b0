"""headd's SQLite plane: ``index.db`` (the projection of the tree, four-arm retrieval, recall),
``state.db`` (usage state, attached) and the transcript index.

The index's Python API is :func:`open_plane` and the :class:`Plane` it returns (``rebuild``,
``update``, ``status``, ``search``, ``recall``, ``backfill``); see ``headd_plane.plane``.
Submodules are imported lazily so importing one part of the plane never loads the others.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Plane", "open_plane"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import plane

        return getattr(plane, name)
    raise AttributeError(name)
