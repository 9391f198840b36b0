"""Record memhtml 0.15.1's `search` answers on the anchor corpus, for the parity test.

Writes tests/data/plane_memhtml_search.json: for each case, the CLI arguments and the ranked
paths memhtml returned (embeddings off, a fresh state plane, so salience ranks by updated_at
and the order does not depend on the clock). Run once where memhtml is installed
(``bash bench/peers/peers.sh``)::

    python -m bench.peers.plane_record [--memhtml DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.peers import MEMHTML_HOME
from bench.peers.plane_parity import QUERIES, REPO, clone, memhtml

SCOPED = [
    ["ledger", "--type", "procedural"],
    ["ledger", "--type", "task"],
    ["checkout", "--workspace", "payments"],
    ["alert", "--tag", "alerts", "--tag", "incident"],
    ["deploy", "--entity", "SERVICE:Checkout-API"],
    ["pool", "--include-archived"],
    ["region", "--as-of", "2026-11-30T09:29:00Z"],
    ["layout", "--facet", "kind=layout"],
    ["anything", "--entity", "vendor:nobody"],
    ["primary region", "--limit", "3"],
    ["region", "--entity", "cloud:aws"],
    ["anything", "--tag", "environments"],
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memhtml", type=Path, default=MEMHTML_HOME)
    args = parser.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        clone(store)
        memhtml(args.memhtml, store, "index", "rebuild")
        recorded_at = time.time()
        for argv in [[q] for q in QUERIES] + SCOPED:
            envelope, _ = memhtml(args.memhtml, store, "search", *argv)
            data = envelope.get("data", {})
            cases.append(
                {
                    "argv": argv,
                    "paths": [h["path"] for h in data.get("hits", [])],
                    "scope_empty": data.get("scopeEmpty"),
                    "archived_matches": data.get("archivedMatches"),
                }
            )
    out = REPO / "tests" / "data" / "plane_memhtml_search.json"
    out.write_text(
        json.dumps({"tool": "memhtml 0.15.1", "recorded_at": recorded_at, "cases": cases}, indent=1)
        + "\n",
        encoding="utf-8",
    )
    print(json.dumps({"cases": len(cases), "written": str(out.relative_to(REPO))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
