"""headctl's memhtml commands beside memhtml 0.15.1 itself: one script on two stores, key by key.

``bench.peers.cli_compare`` runs the script (writes, a duplicate, batches with a bad line and a
clashing path, links, neighbours, a correction, lists with filters and a cursor, tasks through
``done``, entity activity, an archive, doctor, publish twice, a last-wins consolidation) through ``headctl --json`` against a real daemon
and through the real ``memhtml`` on its own store. Every key memhtml answers must be in ours with
the same value (moments and commits only present), the exit codes and error codes must agree,
both histories must hold the same number of commits (but memhtml's second commit for a
consolidation's supersede), and the listings and sitemap ``publish``
wrote must hold the same bytes but for the moments they show. Skipped when the peer is not installed
(``bash bench/peers/peers.sh``).
"""

from __future__ import annotations

import pytest

from bench.peers.cli_compare import KNOWN, PEER_EXTRA_COMMITS, compare, differences
from bench.peers.memhtml_mcp import PeerMissing, memhtml_command


def test_differences_names_missing_keys_and_other_values_and_ignores_moments() -> None:
    theirs = {"path": "a.html", "nextCursor": None, "commitSha": "abc", "files": [{"x": 1}]}
    assert differences({**theirs, "commitSha": "def", "extra": 1}, theirs) == []
    assert differences({"path": "b.html", "commitSha": None, "files": [{"x": 2}]}, theirs) == [
        ".path: 'b.html' != 'a.html'",
        ".nextCursor: missing",
        ".files[0].x: 2 != 1",
    ]


def test_headctl_answers_what_memhtml_answers_command_by_command() -> None:
    try:
        memhtml_command()
    except PeerMissing as exc:
        pytest.skip(str(exc))
    report = compare()
    for step in report["steps"]:
        assert step["exit"][0] == step["exit"][1], step
        if "codes" in step:
            assert step["codes"][0] == step["codes"][1], step
        else:
            assert set(step["differences"]) <= KNOWN, step
    assert report["commits"]["headctl"] + PEER_EXTRA_COMMITS == report["commits"]["memhtml"]
    assert report["published"] == []
