"""A project's instructions to Claude: ``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``
and ``.claude/rules/*.md``.

These are instructions, not facts: each section (a level-1 or level-2 heading and what follows
it, or the text before the first heading) becomes a procedural memory of its own, and each file
one memory that names its sections, which every section links to ``part_of``, so a recalled rule
leads back to the file it came from. Sections split only at headings, so a list is never cut.
The same splitter serves ``AGENTS.md`` (``codex``).
"""

from __future__ import annotations

from pathlib import Path

from headd.importers.markdown import (
    Unreadable,
    claim_and_body,
    read_source,
    sections,
    split_front_matter,
)
from headd.importers.model import Item, Parsed, Skipped, short_title

SOURCE = "claude-md"
FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
RULES = ".claude/rules"


def instruction_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = [root / name for name in FILES if (root / name).is_file()]
    rules = root / RULES
    if rules.is_dir():
        found.extend(sorted(rules.glob("*.md")))
    return found


def parse(root: Path) -> Parsed:
    return parse_files(SOURCE, root, instruction_files(root), "procedural")


def parse_files(source: str, root: Path, files: list[Path], memory_type: str) -> Parsed:
    parsed = Parsed()
    project = (root if root.is_dir() else root.parent).resolve().name
    for path in files:
        rel = path.name if root.is_file() else str(path.relative_to(root))
        try:
            text = read_source(path)
        except Unreadable as exc:
            parsed.skipped.append(Skipped(rel, str(exc)))
            continue
        _, body = split_front_matter(text.text)
        file_key = f"{project}/{rel}"
        file_item_index = len(parsed.items)
        headings: list[str] = []
        for number, section in enumerate(sections(body), start=1):
            heading = section.heading or f"{rel} (opening)"
            claim, paragraphs = claim_and_body(section.text)
            if not section.text:  # a heading over nothing (or over its subsections): no memory
                continue
            if not claim:
                claim = heading
            headings.append(heading)
            parsed.items.append(
                Item(
                    source=source,
                    file=f"{project}/{rel} § {heading}",
                    file_hash=text.hash,
                    key=f"{file_key}#{number}:{heading}",
                    title=short_title(f"{heading} ({project} {rel})"),
                    type=memory_type,
                    claim=claim,
                    body=paragraphs,
                    tags=(source,),
                    links=(("part_of", file_key),),
                )
            )
        if not headings:
            continue
        listed = "; ".join(headings)
        parsed.items.insert(
            file_item_index,
            Item(
                source=source,
                file=f"{project}/{rel}",
                file_hash=text.hash,
                key=file_key,
                title=short_title(f"{rel} of {project}"),
                type=memory_type,
                claim=f"{rel} of {project} holds {len(headings)} section"
                f"{'s' if len(headings) != 1 else ''}.",
                body=(f"Sections: {listed}.",),
                tags=(source,),
            ),
        )
    return parsed
