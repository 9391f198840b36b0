"""Texts derived from a parsed memory: canonical text, body/fts/disclosure text, chunks, words.

memhtml is JavaScript, and every derived text must match what its index stores byte for byte, so
the whitespace rules here are JavaScript's, not Python's: ``String.prototype.trim`` and ``\\s``
strip a fixed set of Unicode spaces (U+00A0, U+2000..U+200A, U+3000, U+FEFF …) but not U+001C..
U+001F or U+0085, which Python's ``str.strip`` does strip. Lengths are UTF-16 code units.

Everything here is pure: a function of its arguments (a selectolax node counts as an argument).
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from headd.memfile.vocabulary import GIST_EXCLUDED_ELEMENTS, INLINE_ELEMENTS

#: JavaScript's WhiteSpace + LineTerminator: what ``\s`` matches and ``trim()`` strips.
JS_SPACE_CHARS: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_SPACE_CLASS: Final = "[" + re.escape(JS_SPACE_CHARS) + "]"
_JS_SPACE_RUN = re.compile(_JS_SPACE_CLASS + "+")
#: Two or more spaces: what is left to collapse once the other ASCII whitespace became spaces.
_SPACE_RUN = re.compile("  +")
#: JavaScript whitespace other than the space itself.
_JS_SPACE_NOT_SPACE_CHARS: Final = JS_SPACE_CHARS.replace(" ", "")
#: What of it a ``collapse_ascii`` output can still hold (no tab, LF, FF or CR).
_JS_SPACE_BEYOND_ASCII_RUNS: Final = _JS_SPACE_NOT_SPACE_CHARS.translate(
    {ord(char): None for char in "\t\n\f\r"}
)
#: Whitespace JavaScript's ``\\s`` and Python's ``str.split()`` disagree on (Python alone splits
#: on U+001C..U+001F and U+0085; JavaScript alone on U+FEFF).
_SPLIT_DISAGREEMENT: Final = "\x1c\x1d\x1e\x1f\x85\ufeff"
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])" + _JS_SPACE_CLASS + "+")

#: The chunk ceiling, in UTF-16 code units (JavaScript string length).
CHUNK_MAX_CHARS: Final = 1800


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_SPACE_CHARS)


def collapse_ascii(text: str) -> str:
    """Runs of ASCII whitespace to one space, then a JavaScript trim (memhtml's ``collapse``).

    Plain ``str.replace`` passes: several times faster than a regex ``sub`` on a large body,
    where nearly every gap between words is one match.
    """
    return js_trim(_collapse_runs(text))


def _collapse_runs(text: str) -> str:
    """Runs of ASCII whitespace (space, tab, LF, FF, CR) to one space; nothing trimmed.

    The four other characters become spaces by ``str.replace`` (a byte scan each, when
    present), then one regex pass shortens the few runs left; a text with no run at all (the
    common case for short texts) is returned as it is.
    """
    if "\n" in text or "\t" in text or "\r" in text or "\f" in text:
        text = text.replace("\n", " ").replace("\t", " ").replace("\r", " ").replace("\f", " ")
    if "  " in text:
        return _SPACE_RUN.sub(" ", text)
    return text


def collapse_js(text: str, *, collapsed: bool = False) -> str:
    """Runs of JavaScript whitespace to one space, then trimmed (``replace(/\\s+/g, " ").trim()``).

    ``collapsed``: the text is ``collapse_ascii`` output, which spares a scan.
    """
    if not _has_js_space_besides_single_spaces(text, collapsed=collapsed):
        return text.strip(" ")  # nothing to collapse (the common case: already collapsed)
    return _JS_SPACE_RUN.sub(" ", text).strip(" ")


def _has_js_space_besides_single_spaces(text: str, *, collapsed: bool = False) -> bool:
    """True when ``text`` holds JavaScript whitespace other than lone spaces.

    ``collapsed`` says the text already went through ``collapse_ascii`` (no run of two spaces,
    no tab, LF, FF or CR), which leaves only the other characters to look for.
    """
    if text.isascii():
        if collapsed:
            return "\v" in text
        return (
            "  " in text
            or "\n" in text
            or "\t" in text
            or "\r" in text
            or "\f" in text
            or "\v" in text
        )
    if not collapsed:
        if "  " in text:
            return True
        chars = _JS_SPACE_NOT_SPACE_CHARS
    else:
        chars = _JS_SPACE_BEYOND_ASCII_RUNS
    # One substring scan per character beats a regex character class on a long text (and a
    # character above the text's widest is refused without a scan).
    return any(char in text for char in chars)


def utf16_len(text: str) -> int:
    """JavaScript's ``length``: UTF-16 code units (an astral character counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """JavaScript's ``slice(0, units)``: the first ``units`` UTF-16 code units.

    A cut inside a surrogate pair leaves half a character; it becomes U+FFFD, as it does once
    memhtml's string reaches UTF-8.
    """
    if text.isascii() or len(text) * 2 <= units:
        return text[:units]
    data = text.encode("utf-16-le", "surrogatepass")[: 2 * units]
    return data.decode("utf-16-le", "replace")


_ISO_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)Z)?"
)


# The same stamps recur across the files of a store (an import writes one ``memhtml-created``
# into thousands), and the rule is a pure function of the text: remembered, bounded.
@functools.lru_cache(maxsize=4096)
def is_valid_datetime(value: str) -> bool:
    """``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ssZ``, a real calendar date (sorts as a string).

    Years below 100 are refused, as memhtml's ``Date.UTC`` probe refuses them (it maps 0..99 to
    1900..1999, so the round trip fails).
    """
    match = _ISO_DATETIME.fullmatch(value)
    if match is None:
        return False
    year_text, month_text, day_text = match.groups()
    year, month, day = int(year_text), int(month_text), int(day_text)
    if year < 100 or not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and calendar.isleap(year):
        return day <= 29
    return day <= _DAYS_IN_MONTH[month]


_DAYS_IN_MONTH: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


# --- canonical text ------------------------------------------------------------------------


def canonical_text(root: Any, exclude_code: bool = False) -> str:
    """The article text the content hash is taken over (anchor-corpus README, verified rule).

    Text nodes in document order; every non-inline element adds a collapsible space at each
    edge; inside ``<pre>`` text is kept byte for byte; elsewhere runs of ASCII whitespace become
    one space. Adjacent pieces of one kind are joined first, then one leading space is removed
    from the first piece and one trailing space from the last, only when those are not ``<pre>``
    text. Iterative, so a pathologically deep file cannot overflow the stack.

    ``root`` is a selectolax Lexbor node. ``exclude_code`` drops ``<pre>``/``<code>`` subtrees
    (the gist rule).
    """
    verbatims: list[bool] = []
    texts: list[str] = []
    root_tag = root.tag
    # Stack items: (node, verbatim) to visit, or None for a block's closing boundary.
    stack: list[tuple[Any, bool] | None] = [(root, root_tag == "pre")]
    while stack:
        item = stack.pop()
        if item is None:
            verbatims.append(False)
            texts.append(" ")
            continue
        node, verbatim = item
        tag = node.tag
        if tag == "-text":
            verbatims.append(verbatim)
            texts.append(node.text_content or "")
            continue
        if tag == "-comment" or tag is None or tag.startswith("!"):
            continue
        if exclude_code and tag in GIST_EXCLUDED_ELEMENTS:
            continue
        if tag not in INLINE_ELEMENTS:
            verbatims.append(False)
            texts.append(" ")
            stack.append(None)
        nested = verbatim or tag == "pre"
        children: list[Any] = []
        child = node.child
        while child is not None:
            children.append(child)
            child = child.next
        for child in reversed(children):
            stack.append((child, nested))
    return render_segments(verbatims, texts)


def render_segments(verbatims: Sequence[bool], texts: Sequence[str]) -> str:
    """Canonical text from document-order segments (``verbatim`` = text inside a ``<pre>``;
    an empty ``verbatims`` says no segment is).

    Adjacent segments of one kind are joined (once, so a large file stays linear), runs of
    ASCII whitespace collapse outside ``<pre>``, then one leading space comes off the first
    segment and one trailing space off the last, when those are not ``<pre>`` text.
    """
    if not any(verbatims):  # the common case: one collapsible run
        text = _collapse_runs("".join(texts))
        if text.startswith(" "):
            text = text[1:]
        if text.endswith(" "):
            text = text[:-1]
        return text
    kinds: list[bool] = []
    pieces: list[list[str]] = []
    for verbatim, piece in zip(verbatims, texts, strict=True):
        if kinds and kinds[-1] == verbatim:
            pieces[-1].append(piece)
        else:
            kinds.append(verbatim)
            pieces.append([piece])
    last = len(pieces) - 1
    out: list[str] = []
    for index, (verbatim, parts) in enumerate(zip(kinds, pieces, strict=True)):
        text = "".join(parts)
        if not verbatim:
            text = _collapse_runs(text)
            if index == 0 and text.startswith(" "):
                text = text[1:]
            if index == last and text.endswith(" "):
                text = text[:-1]
        out.append(text)
    return "".join(out)


def text_content(node: Any) -> str:
    """A subtree's searchable text: canonical text, fully collapsed (``<pre>`` too) and trimmed."""
    return collapse_ascii(canonical_text(node))


def gist_text(mark: Any) -> str:
    """The claim: the ``<mark>`` text without ``<pre>``/``<code>``, collapsed and trimmed."""
    return collapse_ascii(canonical_text(mark, exclude_code=True))


# --- index texts ---------------------------------------------------------------------------


def fts_text_of(title: str, gist: str, body_text: str) -> str:
    """Title, gist and body joined by newlines, empty parts dropped (``ftsTextFor``)."""
    if title and gist and body_text:  # the common case: all three
        return f"{title}\n{gist}\n{body_text}"
    return "\n".join(part for part in (title, gist, body_text) if part != "")


def disclosure_text_of(
    gist: str,
    summaries: Iterable[str],
    facets: Iterable[tuple[str, str]],
    citations: Iterable[str],
) -> str:
    """What recall may quote: gist, summaries, ``name: value`` facets, citation texts.

    ``<aside>`` and ``<details>`` bodies stay out by construction. Not deduplicated (memhtml's
    ``disclosureTextFor`` composes from the undeduplicated lists).
    """
    parts = [gist, *summaries, *[f"{name}: {value}" for name, value in facets], *citations]
    trimmed = [part.strip(JS_SPACE_CHARS) for part in parts]  # js_trim, inlined: a hot path
    return "\n".join([part for part in trimmed if part != ""])


def word_count_of(body_text: str, *, collapsed: bool = False) -> int:
    """Whitespace-separated tokens (JavaScript ``\\s``) of the body text.

    ``collapsed``: the text is ``collapse_ascii`` output (the body text is), which spares a scan.
    """
    trimmed = js_trim(body_text)
    if trimmed == "":
        return 0
    if not _has_js_space_besides_single_spaces(trimmed, collapsed=collapsed):
        return trimmed.count(" ") + 1  # the common case: words separated by single spaces
    if not any(char in trimmed for char in _SPLIT_DISAGREEMENT):
        return len(trimmed.split())  # Python splits on exactly JavaScript's set here
    return len(_JS_SPACE_RUN.split(trimmed))


def words_and_chunks_of(body_text: str) -> tuple[int, list[tuple[str, int]]]:
    """``(word_count_of(body_text, collapsed=True), chunk_text(body_text))`` with one whitespace
    scan between them: the body text is ``collapse_ascii`` output (the record's is)."""
    trimmed = js_trim(body_text)
    if trimmed == "":
        return 0, []
    single_spaced = not _has_js_space_besides_single_spaces(trimmed, collapsed=True)
    if single_spaced:
        words = trimmed.count(" ") + 1
    elif not any(char in trimmed for char in _SPLIT_DISAGREEMENT):
        words = len(trimmed.split())
    else:
        words = len(_JS_SPACE_RUN.split(trimmed))
    return words, _chunks_of_trimmed(trimmed, CHUNK_MAX_CHARS, single_spaced)


def chunk_text(text: str, max_chars: int = CHUNK_MAX_CHARS) -> list[tuple[str, int]]:
    """Chunks of at most ``max_chars`` UTF-16 units, no overlap: ``[(text, char_count)]``.

    One chunk when the trimmed text fits (the common case: one fact per file). Otherwise split
    after ``.``/``!``/``?`` + whitespace, hard-cut a sentence longer than the ceiling, and pack
    whole units greedily joined by one space. A hard cut inside a surrogate pair leaves U+FFFD on
    each side, as memhtml's stored chunk rows show (see ``_hard_cut``).
    """
    trimmed = js_trim(text)
    if trimmed == "":
        return []
    return _chunks_of_trimmed(trimmed, max_chars, None)


def _chunks_of_trimmed(
    trimmed: str, max_chars: int, single_spaced: bool | None
) -> list[tuple[str, int]]:
    """``chunk_text`` of a non-empty trimmed text; ``single_spaced`` (when known) says its only
    whitespace is lone spaces."""
    total = utf16_len(trimmed)
    if total <= max_chars:
        return [(trimmed, total)]
    if single_spaced is None:
        single_spaced = not _has_js_space_besides_single_spaces(trimmed)
    if total == len(trimmed) and single_spaced:
        return _chunk_single_spaced(trimmed, max_chars)
    # Without astral characters every piece's UTF-16 length is its length: measured once here.
    measure = len if total == len(trimmed) else utf16_len
    pieces = _pack(_sentences(trimmed, max_chars, measure), max_chars, measure)
    return [(piece, measure(piece)) for piece in pieces]


def _chunk_single_spaced(text: str, max_chars: int) -> list[tuple[str, int]]:
    """``chunk_text`` for a trimmed text whose only whitespace is lone spaces and whose every
    character is one UTF-16 unit (a collapsed body, the common case), without building units.

    Sentences are then separated by exactly one space, so whole units packed with one space
    between them are a slice of the text: each chunk runs from its start to the last sentence
    break (a space after ``.``/``!``/``?``) that keeps it within the ceiling, or is a hard cut
    of exactly ``max_chars`` when the sentence there is longer than that (the cut's remainder
    then starts the next chunk, as its last unit would in ``_pack``).
    """
    chunks: list[tuple[str, int]] = []
    start = 0
    length = len(text)
    while length - start > max_chars:
        limit = start + max_chars + 1  # a break's space sits at most max_chars past start
        # The last break of the three kinds: each later kind is looked for only past the break
        # found so far (the latest wins), so a window is scanned about once, not three times.
        cut = text.rfind(". ", start, limit)
        cut = max(cut, text.rfind("! ", max(cut + 1, start), limit))
        cut = max(cut, text.rfind("? ", max(cut + 1, start), limit))
        if cut < 0:  # the sentence here is longer than the ceiling: a hard cut
            chunks.append((text[start : start + max_chars], max_chars))
            start += max_chars
            continue
        chunks.append((text[start : cut + 1], cut + 1 - start))
        start = cut + 2
    chunks.append((text[start:], length - start))
    return chunks


def _sentences(text: str, max_chars: int, measure: Callable[[str], int]) -> list[str]:
    units: list[str] = []
    for sentence in _sentence_split(text):
        piece = js_trim(sentence)
        if piece == "":
            continue
        if measure(piece) <= max_chars:
            units.append(piece)
            continue
        units.extend(_hard_cut(piece, max_chars))
    return units


def _sentence_split(text: str) -> list[str]:
    """``text.split(/(?<=[.!?])\\s+/)``: cut at each whitespace run that follows ``.``/``!``/``?``.

    When the only whitespace is single spaces (a collapsed body, the common case), every cut is
    one of three two-character strings, which ``str.split`` finds far faster than the regex.
    """
    if _has_js_space_besides_single_spaces(text):
        return _SENTENCE_BREAK.split(text)
    pieces = [text]
    for cut in (". ", "! ", "? "):
        if cut not in text:
            continue
        mark = cut[0]
        split: list[str] = []
        for piece in pieces:
            parts = piece.split(cut)
            split.extend(part + mark for part in parts[:-1])
            split.append(parts[-1])
        pieces = split
    return pieces


def _hard_cut(piece: str, max_chars: int) -> list[str]:
    """Cut into runs of ``max_chars`` UTF-16 units, exactly where JavaScript's ``slice`` cuts.

    A cut inside a surrogate pair leaves a lone surrogate on each side; memhtml's SQLite driver
    stores each as U+FFFD (one unit, so the count is unchanged), and so do we.
    """
    data = piece.encode("utf-16-le", "surrogatepass")
    step = 2 * max_chars
    return [data[at : at + step].decode("utf-16-le", "replace") for at in range(0, len(data), step)]


def _pack(units: Sequence[str], max_chars: int, measure: Callable[[str], int]) -> list[str]:
    chunks: list[str] = []
    current = ""
    current_len = 0
    for unit in units:
        unit_len = measure(unit)
        candidate_len = unit_len if current == "" else current_len + 1 + unit_len
        if candidate_len <= max_chars:
            current = unit if current == "" else f"{current} {unit}"
            current_len = candidate_len
            continue
        if current != "":
            chunks.append(current)
        current = unit
        current_len = unit_len
    if current != "":
        chunks.append(current)
    return chunks


# --- entities ------------------------------------------------------------------------------


def split_entity(entity: str) -> tuple[str, str]:
    """``type:name`` at the first colon; no colon, a leading or a trailing one -> ``unknown``."""
    at = entity.find(":")
    if at <= 0 or at == len(entity) - 1:
        return ("unknown", entity)
    return (entity[:at], entity[at + 1 :])


def entity_rows_of(
    entities: Iterable[str], defined_terms: Iterable[str], code_langs: Iterable[str]
) -> list[tuple[str, str]]:
    """``file_entities`` rows: head entities, then ``concept:`` per dfn, then ``lang:`` per code.

    Deduplicated on ``(type, name)``, first occurrence kept, as memhtml's projection does.
    """
    rows: list[tuple[str, str]] = []
    for entity in entities:
        trimmed = js_trim(entity)
        if trimmed:
            rows.append(split_entity(trimmed))
    for term in defined_terms:
        trimmed = js_trim(term)
        if trimmed:
            rows.append(("concept", trimmed))
    rows.extend(("lang", lang) for lang in code_langs)
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for row in rows:
        key = row[0] + "\0" + row[1]
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out
