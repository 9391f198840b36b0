"""Shared fixtures: the anchor corpus (shipped in ``tests/data/``) cloned once per run.

Everything a test reads lives in the repository; helpers live in the ``support`` package.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings
from support.data import ANCHOR, clone_anchor

# CI runs the property tests derandomized (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``): the same
# examples for the same code, so a commit's verdict is reproducible and never a coin toss.
# Developers' runs keep drawing fresh examples, which is where new counterexamples come from
# (two were found that way and fixed as tests of their own).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def anchor_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone (with work tree) of the anchor corpus written by memhtml 0.15.1.

    Read-only by convention: tests that write must copy it (``git clone`` it again).
    """
    return clone_anchor(tmp_path_factory.mktemp("anchor") / "store")


@pytest.fixture(scope="session")
def anchor_goldens() -> dict[str, dict]:
    """goldens.jsonl by path."""
    out: dict[str, dict] = {}
    with open(ANCHOR / "goldens.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out[row["path"]] = row
    return out
