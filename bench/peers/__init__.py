"""The tools that need memhtml 0.15.1 (and the Node 24 it runs on): ``peers.sh`` installs both into
``bench/.peers/memhtml`` (never committed); the modules here drive them.

- ``memhtml_mcp``: memhtml's CLI index commands and its ``serve mcp`` stdio server, the daemon
  bench's peer (``bench.daemon_bench`` skips it with ``--skip-memhtml``);
- ``parse_differential``: our parser against memhtml's on random memory files;
- ``plane_parity``: the SQLite plane's ranked answers and timings against memhtml's;
- ``plane_record``: records memhtml's answers for ``tests/test_plane_retrieval_parity.py``.
"""

from __future__ import annotations

from pathlib import Path

#: Where ``peers.sh`` installs memhtml and Node.
MEMHTML_HOME = Path(__file__).resolve().parents[1] / ".peers" / "memhtml"
