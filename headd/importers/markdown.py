"""The Markdown every file-based source shares: reading a file safely, front matter, headings,
paragraphs, a first sentence, ``[[wiki links]]``.

Front matter is the small YAML subset these tools write (``key: value``, ``key: [a, b]``, a
``- item`` list under a key, one level of nesting such as ``metadata: {type: …}``); anything else
is kept as text and ignored, so an unknown or odd key never fails a file. No YAML library: the
files are someone else's, and a full YAML loader is more surface than this subset needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from headd.importers.model import MAX_FILE_BYTES, file_hash
from headd.memfile.render import claim_from_prose, paragraphs_of

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
WIKI_LINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")


class Unreadable(Exception):
    """A file left out: the message is the reason the report shows."""


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str
    hash: str


def read_source(path: Path, limit: int = MAX_FILE_BYTES) -> SourceFile:
    """The file's text, or ``Unreadable``: a symbolic link, larger than ``limit``, or not
    UTF-8 (read as bytes first, so a huge file is refused by its size before it is read)."""
    if path.is_symlink():
        raise Unreadable("a symbolic link (not followed)")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise Unreadable(f"cannot read it: {exc.strerror or exc}") from None
    if size > limit:
        raise Unreadable(f"too large ({size:,} bytes; the limit is {limit:,})")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 (byte {exc.start})") from None
    return SourceFile(path, text.removeprefix("\ufeff").replace("\r\n", "\n"), file_hash(data))


def _scalar(value: str) -> str | list[str]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        return [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
    return _unquote(value)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


FrontValue = str | list[str] | dict[str, "FrontValue"]


def split_front_matter(text: str) -> tuple[dict[str, FrontValue], str]:
    """(front matter, the rest). No ``---`` fence on the first line: no front matter."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    closing = text.find("\n", end + 4)
    rest = "" if closing < 0 else text[closing + 1 :]
    return parse_front_matter(text[4:end]), rest


def parse_front_matter(block: str) -> dict[str, FrontValue]:
    out: dict[str, FrontValue] = {}
    current: str | None = None
    for raw in block.split("\n"):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indented = raw[0] in " \t"
        line = raw.strip()
        if indented and current is not None:
            holder = out.get(current)
            if line.startswith("- "):
                items = holder if isinstance(holder, list) else []
                items.append(_unquote(line[2:]))
                out[current] = items
            elif ":" in line:
                nested = holder if isinstance(holder, dict) else {}
                name, _, value = line.partition(":")
                nested[name.strip()] = _scalar(value)
                out[current] = nested
            continue
        if ":" not in line:
            continue
        name, _, value = line.partition(":")
        current = name.strip()
        out[current] = _scalar(value) if value.strip() else ""
    return out


def text_value(front: dict[str, FrontValue], *names: str) -> str | None:
    """The first of ``names`` that holds a non-empty string (a nested ``a.b`` too)."""
    for name in names:
        holder: FrontValue | None = front
        for part in name.split("."):
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, str) and holder.strip():
            return holder.strip()
    return None


def list_value(front: dict[str, FrontValue], name: str) -> list[str]:
    value = front.get(name)
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [v for v in value if v]
    return []


@dataclass(frozen=True)
class Section:
    """A heading and the text under it up to the next heading of the same or a higher level
    (``level`` 0: the text before the first heading)."""

    heading: str
    level: int
    text: str


def sections(text: str, max_level: int = 2) -> list[Section]:
    """Split at headings of level ``max_level`` or above, never inside a code fence. A list is
    never split: only a heading line starts a section, and a heading ends any list."""
    out: list[Section] = []
    heading, level = "", 0
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match is not None and len(match.group(1)) <= max_level:
            out.append(Section(heading, level, "\n".join(lines).strip()))
            heading, level, lines = match.group(2).strip(), len(match.group(1)), []
            continue
        lines.append(line)
    out.append(Section(heading, level, "\n".join(lines).strip()))
    return [s for s in out if s.heading or s.text]


def first_heading(text: str) -> str | None:
    for line in text.split("\n"):
        match = _HEADING.match(line)
        if match is not None:
            return match.group(2).strip()
    return None


def strip_first_heading(text: str) -> str:
    lines = text.strip().split("\n")
    if lines and _HEADING.match(lines[0]):
        return "\n".join(lines[1:]).strip()
    return text.strip()


_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_INLINE = re.compile(r"\*\*|__|`")


def plain(text: str) -> str:
    """A line of Markdown as a sentence: list marks and emphasis marks dropped."""
    return " ".join(_INLINE.sub("", _LIST_MARK.sub("", text)).split())


def claim_and_body(text: str, claim: str | None = None) -> tuple[str, tuple[str, ...]]:
    """A memory's claim and body paragraphs from Markdown: the given claim (a description) and
    every paragraph, or the first sentence of the first prose line and the rest. A list's first
    item is a claim of its own, and the list stays whole in the body."""
    paragraphs = paragraphs_of(text)
    if claim:
        return plain(claim), paragraphs
    if not paragraphs:
        return "", ()
    first = paragraphs[0]
    if _FENCE.match(first):
        return "", paragraphs
    first_line = plain(first.split("\n", 1)[0])
    sentence = claim_from_prose(first_line)
    if _LIST_MARK.match(first) or "\n" in first.strip():
        return sentence, paragraphs
    rest = first_line[len(sentence) :].strip()
    return sentence, ((rest,) if rest else ()) + paragraphs[1:]


def wiki_links(text: str) -> list[str]:
    return [m.group(1).strip() for m in WIKI_LINK.finditer(text)]
