"""The data the repository ships for its tests, under ``tests/data/``; nothing outside it.

``anchor-corpus/`` is a store written by memhtml 0.15.1 itself, with what that tool's own index
says about every file (its ``README.md`` says how it was made and what each file holds).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
DATA = TESTS / "data"
ANCHOR = DATA / "anchor-corpus"


def clone_anchor(dest: Path) -> Path:
    """A fresh clone (with work tree) of the anchor store at ``dest``."""
    subprocess.run(
        ["git", "clone", "-q", str(ANCHOR / "store.bundle"), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest
