"""Throughput of the memory-file writer on the anchor corpus's tool-written files.

Run: ``python -m bench.writer_bench [store-clone]`` with the anchor corpus named by
``HEADD_ANCHOR_CORPUS`` (its bundle is cloned to a temporary directory when no clone is given).
Prints one JSON document: files per second and microseconds per file for re-serializing
articles, rendering whole files (hash included) and single head edits, five rounds each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.support.data import anchor_dir
from headd.memfile.head_edit import add_link, set_meta
from headd.memfile.render import MemoryFields, render_memory, reserialize_article


def main() -> None:
    anchor = anchor_dir()
    report: dict[str, dict[str, float]] = {}
    if len(sys.argv) > 1:
        store = Path(sys.argv[1])
    else:
        store = Path(tempfile.mkdtemp()) / "store"
        subprocess.run(["git", "clone", "-q", str(anchor / "store.bundle"), str(store)], check=True)
    rows = [json.loads(line) for line in (anchor / "goldens.jsonl").read_text().splitlines()]
    texts = [(store / r["path"]).read_text() for r in rows if r["content_hash_matches_meta"]]
    inners = [t[t.index("<article>\n") + 10 : t.rindex("\n</article>")] for t in texts]

    def rate(label: str, fn, items) -> None:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        rounds = 5
        for _ in range(rounds):
            for item in items:
                fn(item)
        elapsed = time.perf_counter() - start
        n = rounds * len(items)
        report[label] = {"per_s": round(n / elapsed), "us_each": round(elapsed / n * 1e6, 1)}

    rate("reserialize_article", reserialize_article, inners)
    fields = [
        MemoryFields(
            title="t", memory_type="semantic", created="2026-11-30T09:00:00Z", article_html=i
        )
        for i in inners
    ]
    rate("render_memory (hash computed)", render_memory, fields)
    rate(
        "set_meta updated (in place)",
        lambda t: set_meta(t, "updated", "2026-12-01T00:00:00Z"),
        texts,
    )
    rate(
        "set_meta archived (insert)",
        lambda t: set_meta(t, "archived", "2026-12-01T00:00:00Z"),
        texts,
    )
    rate("add_link", lambda t: add_link(t, "relates_to", "/areas/x.html"), texts)
    json.dump({"files": len(texts), "rates": report}, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
