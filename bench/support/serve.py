"""The command line of a daemon a bench starts: one place for the module and the flags every
bench passes, so a bench names only what it does differently (its store, socket and extras)."""

from __future__ import annotations

import sys
from pathlib import Path


def daemon_argv(
    store: Path,
    sock: Path,
    *extra: str,
    embedder: str = "off",
    python: str = sys.executable,
) -> list[str]:
    """``python -m headd.daemon.main`` serving ``store`` on ``sock``, then ``extra``."""
    return [
        python,
        "-m",
        "headd.daemon.main",
        "--store",
        str(store),
        "--socket",
        str(sock),
        "--embedder",
        embedder,
        *extra,
    ]
