"""``bench.daemon_socket`` end to end on a tiny store: the real daemon, headctl and sockets.

memhtml is skipped (``--skip-memhtml``: it needs Node and minutes); everything of ours runs as in
the 10,000-memory benchmark, so a broken step (READY never arriving, a session that does not
commit, a pickup that never shows in ``status``) fails here rather than in a long run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.scifact import write_scifact

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_daemon_socket_bench_runs_and_judges_every_target(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.daemon_socket", "--n", "40", "--queries", "12"]
        + ["--repeat", "2", "--rounds", "1", "--clients", "4", "--skip-memhtml"]
        + ["--cache", str(tmp_path / "cache")],
        cwd=str(REPO),
        env={**os.environ, "HEADD_SCIFACT": str(write_scifact(tmp_path / "scifact"))},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["memhtml_skipped"] == "--skip-memhtml"
    assert report["daemon_status"]["records"] >= 40
    assert report["daemon_status"]["embedder"] == "off"
    assert report["daemon_ready_s"] > 0
    assert report["search_1_client_ms"]["n"] == 12
    assert report["search_4_clients_ms"]["n"] == 12
    assert report["session"]["commit_ms"]["n"] == 2
    assert report["pickup"]["status_poll_ms"]["n"] == 2
    assert report["headctl_index"]["rebuild"]["report"]["files_indexed"] >= 40
    assert report["headctl_index"]["update"]["report"]["added"] == 1
    assert report["plane_update_in_process"]["update_ms"]["n"] == 2
    targets = report["targets"]
    ours = ("search_p50_1_client", "session_commit_ms", "pickup_ms", "index_update_ms")
    assert all(isinstance(targets[name]["pass"], bool) for name in ours)
    assert targets["speedup_vs_memhtml_mcp_search_p50"]["pass"] is None
    assert "load average" in report["uptime_end"]
