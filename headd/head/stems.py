"""A query word's stem, and the forms of it an index holds: the hybrid lexical arm's stemming.

The hybrid search scores a query by stems (docs/design.md, "Search quality"): "studies" also
finds "study" and "studied". The index stays unstemmed (the seed's search, and its answers,
need the exact tokens), so stemming happens at query time: each query token becomes the group
of index tokens that share its Snowball English stem (Porter2, tantivy's ``en_stem``), and
:func:`headd.head.lexical.bm25_group_scores` counts a group as one token.

Which index tokens share a stem is found without walking the vocabulary (a version's vocabulary
is tens of thousands of tokens and changes with every write): the forms are generated from the
stem and the token by English suffix rules (:func:`candidate_forms`), and each candidate the
index holds is kept when the stemmer maps it to the same stem. A form no rule generates is
missed (``ran`` for ``run``); a kept form is never a wrong one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final

from headd.head.tokens import tokenize

#: Endings a stem takes in English words, the most frequent first: those that made a form found
#: in the index on LoCoMo's and SciFact's queries most often (docs/design.md, "Search
#: quality"). Generated forms are confirmed by the stemmer, so an ending can only add a true
#: form of the stem, never a false one; each costs a lookup per query word.
SUFFIXES: Final = (
    "", "s", "ing", "ed", "es", "e", "ly", "ation", "d", "ive", "ate", "ating", "al", "ally",
    "ated", "ates", "ity", "ations", "ions", "ion", "ic", "ers", "er", "ness", "ities",
)  # fmt: skip


@functools.cache
def _stemmer() -> object:
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1 << 12)
def stem(word: str) -> str:
    """``word``'s Snowball English stem."""
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def candidate_forms(token: str) -> tuple[str, ...]:
    """The words ``token``'s stem may stand for, unconfirmed: the token first, then its stem
    and the token with every :data:`SUFFIXES` ending, and the stem's variants before an ending
    (a final ``i`` as ``y``, a final ``e`` dropped, a last consonant doubled)."""
    root = stem(token)
    bases = [root]
    if root.endswith("i"):
        bases.append(root[:-1] + "y")
    if root.endswith("e"):
        bases.append(root[:-1])
    if len(root) > 2 and root[-1] not in "aeiouy" and root[-2] in "aeiou":
        bases.append(root + root[-1])
    if token != root:
        bases.append(token)
    return tuple(dict.fromkeys([token, *(base + suffix for base in bases for suffix in SUFFIXES)]))


def stem_groups(vocabulary: Mapping[str, object], query: str) -> list[tuple[str, ...]]:
    """The query's distinct stems in first-occurrence order, each as the forms of it that
    ``vocabulary`` holds (the query token first, when held): the candidates of
    :func:`candidate_forms` the vocabulary holds and the stemmer maps to the token's stem. A
    stem with no form held is left out."""
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for token in dict.fromkeys(tokenize(query)):
        root = stem(token)
        if root in seen:
            continue
        seen.add(root)
        held = tuple(
            form
            for form in candidate_forms(token)
            if form in vocabulary and (form == token or stem(form) == root)
        )
        if held:
            groups.append(held)
    return groups
