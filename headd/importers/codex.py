"""Codex's memories: ``~/.codex/memories/`` (``MEMORY.md``, ``memory_summary.md``) and a
project's ``AGENTS.md``.

Codex keeps its memories as Markdown notes; each section of them is a semantic memory, and each
section of ``AGENTS.md`` (instructions, as ``CLAUDE.md`` is) a procedural one, both split and
linked to their file as ``claude_md`` does.
"""

from __future__ import annotations

from pathlib import Path

from headd.importers.claude_md import parse_files
from headd.importers.model import Parsed

SOURCE = "codex"
MEMORY_FILES = ("MEMORY.md", "memory_summary.md")


def default_root() -> Path:
    return Path.home() / ".codex" / "memories"


def parse(root: Path) -> Parsed:
    if root.is_file():
        kind = "procedural" if root.name == "AGENTS.md" else "semantic"
        return parse_files(SOURCE, root, [root], kind)
    parsed = Parsed()
    notes = [root / n for n in MEMORY_FILES if (root / n).is_file()]
    for part in (
        parse_files(SOURCE, root, notes, "semantic"),
        parse_files(SOURCE, root, [root / "AGENTS.md"], "procedural")
        if (root / "AGENTS.md").is_file()
        else Parsed(),
    ):
        parsed.items.extend(part.items)
        parsed.skipped.extend(part.skipped)
    return parsed
