"""The prompt hook's relevance floor, measured on LoCoMo: what it keeps out, and what it loses.

    python -m bench.hook_relevance_bench --locomo DIR [--limit 5]

One store per LoCoMo conversation (one memory per dialog turn, as ``bench.quality_bench``
builds it), searched as the hook searches (the head's search, ``limit`` hits), each hit's
coverage of the prompt from ``headd.head.relevance``. Three prompt sets per store:

- ``related``: the conversation's own questions (categories 1-4) with their evidence turns;
- ``foreign``: the other conversations' questions, which name people and events this store
  does not hold (unrelated, but in the same register);
- ``chatter``: :data:`CHATTER`, prompts an agent's person types that no memory answers (coding
  requests, acknowledgements, "write a haiku about cats").

For each candidate floor: how often an unrelated prompt (foreign, chatter) injects anything,
how often a related one injects anything, and how often a related question whose evidence the
unfloored top ``limit`` holds loses all of it. stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.quality_bench import load_locomo, prepare
from headd.head.relevance import relevant_hits
from headd.head.search import search_head

FLOORS = (0.0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8)

#: Prompts that no memory of a conversation answers.
CHATTER = (
    "ok",
    "thanks",
    "yes",
    "continue",
    "go ahead",
    "looks good, ship it",
    "write a haiku about cats",
    "fix the failing test in test_utils.py",
    "refactor this function to use a dataclass",
    "why is the build red?",
    "add type hints to parser.py",
    "explain this stack trace",
    "rename the variable foo to count",
    "run the linter and fix what it finds",
    "what does this regex match?",
    "make the button blue",
    "write a unit test for the login handler",
    "summarise the diff",
    "how do I revert the last commit?",
    "translate this paragraph into French",
    "bump the version to 2.1.0",
    "what time zone is the server in?",
    "convert the csv to json",
    "delete the unused imports",
    "is this SQL query injectable?",
    "draft a commit message",
    "optimise the docker image size",
    "why does npm install fail with EACCES?",
    "open a pull request",
    "sort the list in descending order",
)


def injected(view: Any, prompt: str, limit: int, floor: float) -> list[str]:
    """The paths the hook injects for ``prompt`` at ``floor``, best first (the daemon's
    ``search`` with ``relevance_floor``)."""
    kept, _shares = relevant_hits(view, prompt, search_head(view, prompt, limit=limit), floor)
    return [hit.path for hit in kept]


def measure(locomo: Path, limit: int) -> dict[str, Any]:
    turns, _sessions = load_locomo(locomo)
    prepared = [prepare(corpus, None) for corpus in turns.corpora]
    tallies = {
        f: {"related_injects": 0, "related_lost": 0, "foreign": 0, "chatter": 0} for f in FLOORS
    }
    counts = {"related": 0, "related_found": 0, "foreign": 0, "chatter": 0}
    for store in prepared:
        view = store.view
        for query in store.corpus.queries:
            counts["related"] += 1
            base = injected(view, query.text, limit, 0.0)
            found = bool(query.relevant & set(base))
            counts["related_found"] += found
            for floor in FLOORS:
                kept = injected(view, query.text, limit, floor)
                tallies[floor]["related_injects"] += bool(kept)
                tallies[floor]["related_lost"] += found and not (query.relevant & set(kept))
        for other in prepared:
            if other is store:
                continue
            for query in other.corpus.queries:
                counts["foreign"] += 1
                for floor in FLOORS:
                    tallies[floor]["foreign"] += bool(injected(view, query.text, limit, floor))
        for prompt in CHATTER:
            counts["chatter"] += 1
            for floor in FLOORS:
                tallies[floor]["chatter"] += bool(injected(view, prompt, limit, floor))
    rows = []
    for floor in FLOORS:
        t = tallies[floor]
        rows.append(
            {
                "floor": floor,
                "related_injects": round(t["related_injects"] / counts["related"], 4),
                "evidence_lost": round(t["related_lost"] / max(1, counts["related_found"]), 4),
                "foreign_injects": round(t["foreign"] / counts["foreign"], 4),
                "chatter_injects": round(t["chatter"] / counts["chatter"], 4),
            }
        )
    return {"counts": counts, "limit": limit, "floors": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=os.environ.get("HEADD_LOCOMO"))
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args(argv)
    if args.locomo is None:
        parser.error("give --locomo (or $HEADD_LOCOMO)")
    started = time.perf_counter()
    out = measure(args.locomo, args.limit)
    out["wall_s"] = round(time.perf_counter() - started, 2)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
