"""The data the repository ships for its tests, under ``tests/data/``; nothing outside it.

``anchor-corpus/`` is a store written by memhtml 0.15.1 itself, with what that tool's own index
says about every file (its ``README.md`` says how it was made and what each file holds).
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DATA = TESTS / "data"
ANCHOR = DATA / "anchor-corpus"


def anchor_index() -> sqlite3.Connection:
    """memhtml's own ``index.db`` of the anchor store, opened read-only and immutable: the
    shipped file never changes under a test and no ``-wal``/``-shm`` files appear beside it."""
    return sqlite3.connect(f"file:{ANCHOR / 'index.db'}?mode=ro&immutable=1", uri=True)


def clone_anchor(dest: Path) -> Path:
    """A fresh clone (with work tree) of the anchor store at ``dest``."""
    subprocess.run(
        ["git", "clone", "-q", str(ANCHOR / "store.bundle"), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest
