"""Claude Code's auto memory: ``~/.claude/projects/<slug>/memory/``.

A memory directory holds ``MEMORY.md``, an index of ``- [Title](file.md) — hook`` lines, and
topic files with front matter (``name``, ``description``, ``type: user | feedback | project |
reference``, or ``metadata: {type}`` in newer ones) over a body that states the rule or fact,
often with **Why:** and **How to apply:** parts and ``[[name]]`` links to other topics.

One topic file is one memory: its title (``name``, else the index's title, else its first
heading, else its file name), its claim (``description``, else the first sentence), its body,
the type mapped from Claude's, ``[[links]]`` as ``relates_to`` links, the project slug as the
workspace. An index line whose file is missing is a memory of its own (title and hook). A
memory directory reached twice (two worktree slugs of one repository, or a copy mirrored by
hand) is imported once: the same file name with the same bytes under a second slug is skipped.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from headd.importers.markdown import (
    FrontValue,
    Unreadable,
    claim_and_body,
    first_heading,
    list_value,
    read_source,
    split_front_matter,
    strip_first_heading,
    text_value,
    wiki_links,
)
from headd.importers.model import Item, Parsed, Skipped, file_hash, short_title

SOURCE = "claude-code"
INDEX = "MEMORY.md"

#: Claude's memory types, as memhtml's.
TYPES = {
    "user": "user_preference",
    "feedback": "procedural",
    "project": "semantic",
    "reference": "semantic",
}

_INDEX_LINE = re.compile(
    r"^\s*[-*+]\s+\[(?P<title>[^\]]+)\]\((?P<file>[^)\s]+)\)\s*(?:[—–:-]+\s*(?P<hook>.*))?$"
)
_MD_LINK = re.compile(r"\]\(([^)\s#]+\.md)(?:#[^)]*)?\)")


def default_root() -> Path:
    return Path.home() / ".claude" / "projects"


def memory_dirs(root: Path) -> list[tuple[str, Path]]:
    """(slug, memory directory) under ``root``: the projects folder, one project's folder, or a
    memory directory itself."""
    if (root / "memory").is_dir():
        return [(root.name, root / "memory")]
    if (root / INDEX).is_file() or root.name == "memory":
        return [(root.parent.name, root)]
    if not root.is_dir():
        return []
    return [
        (child.name, child / "memory")
        for child in sorted(root.iterdir())
        if not child.is_symlink() and (child / "memory").is_dir()
    ]


def read_index(memory: Path) -> tuple[dict[str, tuple[str, str]], list[Skipped]]:
    """``file name -> (title, hook)`` from ``MEMORY.md``; an unreadable index is one skip."""
    index = memory / INDEX
    if not index.is_file():
        return {}, []
    try:
        text = read_source(index).text
    except Unreadable as exc:
        return {}, [Skipped(str(index.name), str(exc))]
    entries: dict[str, tuple[str, str]] = {}
    for line in text.split("\n"):
        match = _INDEX_LINE.match(line)
        if match is not None:
            name = match.group("file").removeprefix("./")
            entries[name] = (match.group("title").strip(), (match.group("hook") or "").strip())
    return entries, []


def _name_key(name: str) -> str:
    """How a ``[[link]]`` finds its topic: case, spaces, ``-`` and ``_`` do not matter."""
    return re.sub(r"[\s_-]+", "-", name.strip().lower())


def _type_of(front: dict[str, FrontValue], stem: str) -> str:
    claude = text_value(front, "type", "metadata.type")
    if claude is None:  # Claude names its files <type>_<topic>.md
        prefix = stem.split("_", 1)[0].lower()
        claude = prefix if prefix in TYPES else None
    return TYPES.get((claude or "").lower(), "semantic")


def parse(root: Path) -> Parsed:
    parsed = Parsed()
    seen_dirs: dict[Path, str] = {}
    seen_files: dict[tuple[str, str], str] = {}
    for slug, memory in memory_dirs(root):
        real = memory.resolve()
        if real in seen_dirs:
            parsed.skipped.append(
                Skipped(f"{slug}/memory", f"the same directory as {seen_dirs[real]}")
            )
            continue
        seen_dirs[real] = slug
        _parse_dir(slug, memory, parsed, seen_files)
    return parsed


def _parse_dir(
    slug: str, memory: Path, parsed: Parsed, seen_files: dict[tuple[str, str], str]
) -> None:
    index, skipped = read_index(memory)
    parsed.skipped.extend(skipped)
    items: list[Item] = []
    names: dict[str, str] = {}  # lowercased name, stem or title -> item key
    raw_links: list[tuple[str, list[str]]] = []
    topics = sorted(p for p in memory.glob("*.md") if p.name != INDEX)
    for path in topics:
        rel = f"{slug}/memory/{path.name}"
        try:
            source = read_source(path)
        except Unreadable as exc:
            parsed.skipped.append(Skipped(rel, str(exc)))
            continue
        twin = seen_files.get((path.name, source.hash))
        if twin is not None:
            parsed.skipped.append(Skipped(rel, f"the same file as {twin}/memory/{path.name}"))
            continue
        seen_files[(path.name, source.hash)] = slug
        front, body = split_front_matter(source.text)
        indexed_title, hook = index.get(path.name, ("", ""))
        title = (
            indexed_title
            or text_value(front, "title", "name")
            or first_heading(body)
            or path.stem.replace("_", " ").replace("-", " ")
        )
        description = text_value(front, "description") or None
        claim, paragraphs = claim_and_body(strip_first_heading(body), description)
        if not claim:
            claim = hook or title
        item = Item(
            source=SOURCE,
            file=rel,
            file_hash=source.hash,
            key=rel,
            title=short_title(title),
            type=_type_of(front, path.stem),
            claim=claim,
            body=paragraphs,
            tags=(SOURCE, *list_value(front, "tags")),
            workspace=slug.lstrip("-") or None,
        )
        items.append(item)
        for name in (title, path.stem, path.name, text_value(front, "name") or ""):
            if name:
                names.setdefault(_name_key(name), item.key)
        targets = wiki_links(body) + [m.group(1) for m in _MD_LINK.finditer(body)]
        raw_links.append((item.key, targets))
    for name, (title, hook) in index.items():
        if (memory / name).exists():
            continue
        rel = f"{slug}/memory/{INDEX}#{name}"
        line = f"{title} {hook}".encode()
        items.append(
            Item(
                source=SOURCE,
                file=f"{slug}/memory/{INDEX}",
                file_hash=file_hash(line),
                key=rel,
                title=short_title(title),
                type="semantic",
                claim=hook or title,
                tags=(SOURCE,),
                workspace=slug.lstrip("-") or None,
            )
        )
    by_key = {item.key: item for item in items}
    for key, targets in raw_links:
        links: list[tuple[str, str]] = []
        for target in targets:
            found = names.get(_name_key(target)) or names.get(_name_key(Path(target).name))
            if found is None:
                parsed.broken_links.append((key, target))
            elif found != key and ("relates_to", found) not in links:
                links.append(("relates_to", found))
        if links:
            item = by_key[key]
            by_key[key] = replace(item, links=tuple(links))
    parsed.items.extend(by_key.values())
