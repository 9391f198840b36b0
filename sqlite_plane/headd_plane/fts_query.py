"""A caller's text as an FTS5 MATCH string that cannot fail the statement.

FTS5's query syntax turns ordinary agent text into hard errors: an apostrophe opens a string,
``type:name`` reads as a column filter, a hyphen is an operator, a bare ``AND`` is a syntax
error. So the text is reduced to what the index holds: lowercased runs of Unicode letters and
digits. A balanced pair of ASCII double quotes keeps its words as one phrase; every other
character is dropped rather than escaped. Two forms come out: ``all`` (terms joined by AND) and
``any`` (joined by OR). Both are empty when no term survives, and the caller must then drop the
lexical arm, because an empty MATCH is an error too. Pure.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

QUOTE = '"'


@dataclass(frozen=True, slots=True)
class FtsQueryForms:
    all: str
    any: str


def _is_term_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in ("L", "N")


def terms_of(text: str) -> list[str]:
    """Runs of Unicode letters and digits of the lowercased text, in order."""
    out: list[str] = []
    current: list[str] = []
    for ch in text.lower():
        if _is_term_char(ch):
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def fts_terms(query: str) -> list[str]:
    """Bare tokens and ``"..."`` phrases, each already MATCH-safe on its own."""
    pieces = query.split(QUOTE)
    if len(pieces) % 2 == 0:  # an odd number of quotes: no phrase at all
        return terms_of(query)
    terms: list[str] = []
    for at, piece in enumerate(pieces):
        tokens = terms_of(piece)
        if not tokens:
            continue
        if at % 2 == 1:
            terms.append(f'"{" ".join(tokens)}"')
        else:
            terms.extend(tokens)
    return terms


def fts_query_forms(query: str) -> FtsQueryForms:
    terms = fts_terms(query)
    return FtsQueryForms(all=" AND ".join(terms), any=" OR ".join(terms))


def sanitize_fts_query(query: str) -> str:
    return fts_query_forms(query).any


def has_fts_terms(query: str) -> bool:
    return sanitize_fts_query(query) != ""
