"""The Quickstart's demo finishes and says what answered (run here with the hash embedder, the one
fake the suite allows: the real model's run is ``./quickstart`` itself)."""

from __future__ import annotations

import subprocess

from support.daemon import PYTHON
from support.data import REPO


def test_the_demo_finishes_and_names_its_embedder() -> None:
    done = subprocess.run(
        [PYTHON, str(REPO / "scripts" / "demo.py"), "--embedder", "hash"],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "embedder: hash -> headd-hash" in out
    assert "every memory has its vector" in out, "the searches wait for the vectors"
    assert out.count("lexical + recency + vectors from headd-hash") == 2
    assert "head gate" in out and ": exit 0" in out
    assert "(probe searches ranked at both commits: MRR is" in out, "the gate's line explained"
    assert "daemon down (exit 0); socket removed: True" in out
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr
