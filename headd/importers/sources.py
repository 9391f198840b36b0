"""The sources ``headctl import`` knows: each one's parser and where it looks by default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from headd.importers import basic_memory, claude_code, claude_md, codex, openmemory
from headd.importers.model import Parsed


class Source(NamedTuple):
    parse: Callable[[Path], Parsed]
    default: Callable[[], Path]
    help: str


SOURCES: dict[str, Source] = {
    "claude-code": Source(
        claude_code.parse,
        claude_code.default_root,
        "Claude Code's auto memory (default: every project under ~/.claude/projects)",
    ),
    "claude-md": Source(
        claude_md.parse, Path.cwd, "a project's CLAUDE.md files and .claude/rules (default: .)"
    ),
    "basic-memory": Source(
        basic_memory.parse, Path.cwd, "a basic-memory project directory (default: .)"
    ),
    "openmemory": Source(
        openmemory.parse, Path.cwd, "an OpenMemory export zip (memories.json[l.gz])"
    ),
    "codex": Source(codex.parse, codex.default_root, "Codex's memories or a project's AGENTS.md"),
}
