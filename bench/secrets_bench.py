"""The write door's secret rules beside Yelp's ``detect-secrets``: false refusals on real prose,
catches on a corpus of credentials, and speed.

Usage: ``python -m bench.secrets_bench [--limit N]``, with ``HEADD_SCIFACT`` and
``HEADD_LOCOMO`` set (``bench.support.data``). Prints one JSON document. The prose is
every SciFact abstract (title and text, one text each) and every LoCoMo development turn (text
and photo caption), read from the shared data directory; none of it holds a credential, so every
text with a finding is a false refusal. The credential corpus is the tests' (``tests/
support/secret_corpus.py``): one credential per text, each of a kind the door must name.
``detect-secrets`` runs with its default plugins and filters as on a file (the bench extra);
its figures are absent when it is not installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench.support.data import data_dir
from bench.support.stores import scifact_docs
from headd.secrets.rules import scan

REPO = Path(__file__).resolve().parent.parent


def locomo_texts() -> list[str]:
    out = []
    for path in sorted(data_dir("HEADD_LOCOMO", "conv-26.json").glob("conv-*.json")):
        conversation = json.loads(path.read_text(encoding="utf-8"))
        for key, turns in conversation.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = str(turn.get("text", ""))
                    caption = turn.get("blip_caption")
                    out.append(text + (f" [photo: {caption}]" if caption else ""))
    return out


def scifact_texts() -> list[str]:
    return [f"{title}\n{text}" for _id, title, text in scifact_docs()]


def _detect_secrets() -> Callable[[str], bool] | None:
    """``detect-secrets`` as its ``scan`` command runs it on a file: every default plugin and
    filter, line by line (its ad hoc ``scan_line`` searches eagerly and flags nearly any text)."""
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def flags(text: str) -> bool:
        lines = list(enumerate(text.splitlines(), start=1))
        with default_settings():
            return any(True for _ in _process_line_based_plugins(lines, "memory.md"))

    return flags


def measure(name: str, flags: Callable[[str], bool], texts: Iterable[str]) -> dict[str, Any]:
    texts = list(texts)
    started = time.perf_counter()
    hits = sum(1 for t in texts if flags(t))
    elapsed = time.perf_counter() - started
    return {
        "detector": name,
        "texts": len(texts),
        "flagged": hits,
        "rate": round(hits / len(texts), 5) if texts else 0.0,
        "texts_per_s": round(len(texts) / elapsed, 1) if elapsed else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="at most N texts per corpus")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from secret_corpus import ORDINARY, SECRETS

    corpora = {
        "scifact": scifact_texts()[: args.limit],
        "locomo": locomo_texts()[: args.limit],
        "ordinary": list(ORDINARY),
    }
    detectors: dict[str, Callable[[str], bool]] = {"headd": lambda t: bool(scan(t))}
    ds = _detect_secrets()
    if ds is not None:
        detectors["detect-secrets"] = ds
    report: dict[str, Any] = {"false_refusals": {}, "catches": {}}
    for corpus, texts in corpora.items():
        report["false_refusals"][corpus] = [measure(n, f, texts) for n, f in detectors.items()]
    secrets = [text for _kind, text in SECRETS]
    report["catches"] = [measure(n, f, secrets) for n, f in detectors.items()]
    report["kinds"] = len({kind for kind, _ in SECRETS})
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
