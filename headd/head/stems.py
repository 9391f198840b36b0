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
import threading
import weakref
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


_LOCAL: Final = threading.local()


def _stemmer() -> object:
    """This thread's stemmer: PyStemmer's objects are not to be shared between threads."""
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _LOCAL.stemmer = Stemmer.Stemmer("english")
    return stemmer


@functools.lru_cache(maxsize=1 << 12)
def stem(word: str) -> str:
    """``word``'s Snowball English stem."""
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def candidate_forms(token: str) -> tuple[str, ...]:
    """The words ``token``'s stem may stand for, unconfirmed: the token first, then the stem
    with every :data:`SUFFIXES` ending, and so the stem's variants before an ending (a final
    ``i`` as ``y``, a final ``e`` dropped, a last consonant doubled). The token itself with an
    ending is not tried: it finds few forms for many lookups (docs/design.md, "Search
    quality")."""
    root = stem(token)
    bases = [root]
    if root.endswith("i"):
        bases.append(root[:-1] + "y")
    if root.endswith("e"):
        bases.append(root[:-1])
    if len(root) > 2 and root[-1] not in "aeiouy" and root[-2] in "aeiou":
        bases.append(root + root[-1])
    return tuple(dict.fromkeys([token, *(base + suffix for base in bases for suffix in SUFFIXES)]))


#: How many query tokens' held forms :class:`_HeldForms` keeps per vocabulary.
HELD_FORMS_CAPACITY: Final = 4096


class _HeldForms:
    """The forms of a query token a vocabulary holds, remembered for the most recent
    vocabularies (a version's token map, held weakly, so a version it outlives costs nothing).

    Looking the candidates up is most of what stemming costs a query (a persistent map's lookup
    is a few Python calls, and a word has dozens of candidates), and a daemon's queries share
    their words, so each token is looked up once per version. Bounded: at most
    :data:`HELD_FORMS_CAPACITY` tokens per vocabulary, the oldest dropped first."""

    def __init__(self, vocabularies: int = 2) -> None:
        self._vocabularies = vocabularies
        self._memo: dict[
            int, tuple[weakref.ref[Mapping[str, object]], dict[str, tuple[str, ...]]]
        ] = {}
        self._lock = threading.Lock()

    def of(self, vocabulary: Mapping[str, object]) -> dict[str, tuple[str, ...]] | None:
        key = id(vocabulary)
        entry = self._memo.get(key)
        if entry is not None and entry[0]() is vocabulary:
            return entry[1]
        try:
            ref = weakref.ref(vocabulary)
        except TypeError:  # a plain dict cannot be referred to weakly: no memo
            return None
        held: dict[str, tuple[str, ...]] = {}
        with self._lock:
            self._memo.pop(key, None)
            self._memo[key] = (ref, held)
            while len(self._memo) > self._vocabularies:
                del self._memo[next(iter(self._memo))]
        return held

    def remember(
        self, held: dict[str, tuple[str, ...]], token: str, forms: tuple[str, ...]
    ) -> None:
        with self._lock:
            if len(held) >= HELD_FORMS_CAPACITY:
                del held[next(iter(held))]
            held[token] = forms


_HELD_FORMS: Final = _HeldForms()


def _held_forms(vocabulary: Mapping[str, object], token: str, root: str) -> tuple[str, ...]:
    return tuple(
        form
        for form in candidate_forms(token)
        if form in vocabulary and (form == token or stem(form) == root)
    )


def stem_groups(vocabulary: Mapping[str, object], query: str) -> list[tuple[str, ...]]:
    """The query's distinct stems in first-occurrence order, each as the forms of it that
    ``vocabulary`` holds (the query token first, when held): the candidates of
    :func:`candidate_forms` the vocabulary holds and the stemmer maps to the token's stem. A
    stem with no form held is left out."""
    memo = _HELD_FORMS.of(vocabulary)
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for token in dict.fromkeys(tokenize(query)):
        root = stem(token)
        if root in seen:
            continue
        seen.add(root)
        held = None if memo is None else memo.get(token)
        if held is None:
            held = _held_forms(vocabulary, token, root)
            if memo is not None:
                _HELD_FORMS.remember(memo, token, held)
        if held:
            groups.append(held)
    return groups
