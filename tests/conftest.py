"""Shared fixtures: where the shared data lives, and the anchor corpus cloned once per run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]

# CI runs the property tests derandomized (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``): the same
# examples for the same code, so a commit's verdict is reproducible and never a coin toss.
# Developers' runs keep drawing fresh examples, which is where new counterexamples come from
# (two were found that way and fixed as tests of their own).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def shared_dir() -> Path:
    """``../shared`` beside the checkout (CI and developers), else ``/work/shared``."""
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "data").is_dir():
            return candidate
    raise RuntimeError("shared data not found beside the checkout nor at /work/shared")


SHARED = shared_dir()
ANCHOR = SHARED / "data" / "anchor-corpus"


@pytest.fixture(scope="session")
def anchor_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone (with work tree) of the anchor corpus written by memhtml 0.15.1.

    Read-only by convention: tests that write must copy it (``git clone`` it again).
    """
    dest = tmp_path_factory.mktemp("anchor") / "store"
    subprocess.run(
        ["git", "clone", "-q", str(ANCHOR / "store.bundle"), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest


@pytest.fixture(scope="session")
def anchor_goldens() -> dict[str, dict]:
    """goldens.jsonl by path."""
    out: dict[str, dict] = {}
    with open(ANCHOR / "goldens.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out[row["path"]] = row
    return out
