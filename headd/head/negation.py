"""Whether a text is negated, and whether two texts disagree in polarity. Pure.

A claim and its negation ("X is safe" / "X is not safe") are near-identical to a lexical or a
vector arm; this token test is what keeps them apart, both where search demotes the twin that
contradicts the query (``headd_plane.polarity``) and where sleep refuses to fold two
near-duplicates into one memory (``headd.sleep.phases``).
"""

from __future__ import annotations

import re
import unicodedata

NEGATION_MARKERS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "cannot",
        "without",
        "neither",
        "nor",
        "avoid",
        "disallow",
        "disallowed",
        "forbidden",
        "unsafe",
        "invalid",
        "false",
        "fail",
        "fails",
        "failed",
        "deny",
        "denied",
        "reject",
        "rejected",
    ]
)
CONTRACTIONS = (
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("weren't", "were not"),
    ("don't", "do not"),
    ("doesn't", "does not"),
    ("didn't", "did not"),
    ("won't", "will not"),
    ("can't", "can not"),
    ("cannot", "can not"),
    ("couldn't", "could not"),
    ("shouldn't", "should not"),
    ("wouldn't", "would not"),
    ("mustn't", "must not"),
    ("haven't", "have not"),
    ("hasn't", "has not"),
    ("hadn't", "had not"),
    ("n't", " not"),
)
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")


def _tokens(text: str) -> list[str]:
    out = unicodedata.normalize("NFC", text).lower()
    for pattern, replacement in CONTRACTIONS:
        out = out.replace(pattern, replacement)
    return _WORD.findall(out)


def negated(text: str) -> bool:
    return any(token in NEGATION_MARKERS for token in _tokens(text))


def negation_divergent(a: str, b: str) -> bool:
    return negated(a) != negated(b)
