"""A module imported at its first use, for the heavy libraries a daemon's start does not need.

Why: importing numpy is more than a quarter of a cold start from a snapshot, which must reach
READY within 0.5 s at 10,000 records, and nothing before READY calls it. A module that uses numpy only inside functions binds ``np`` to a :class:`LazyModule` instead
of importing it: the first attribute read imports the real module and rebinds the caller's global
to it, so every later use is an ordinary global lookup of the real module (no proxy left on a
hot path). The daemon imports numpy on a worker thread right after READY, so the first search
rarely pays for it; one that comes earlier imports it itself (the import lock makes the two wait
for one import).

Usage (type checkers see the real module)::

    if TYPE_CHECKING:
        import numpy as np
    else:
        np = LazyModule("numpy", globals(), "np")
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module ``name`` in ``namespace[alias]`` until an attribute is first read."""

    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def load(self) -> ModuleType:
        """Import the module (if no one has) and put it in the caller's namespace."""
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
