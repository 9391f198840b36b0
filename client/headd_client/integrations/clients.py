"""Where each coding agent keeps its MCP servers, hooks and instructions, and what we put there.

The shapes are the ones memhtml 0.15.1's ``integrations install`` writes, with our server under
the name ``headd`` and ``headctl`` as the command:

- Claude Code: the MCP entry under ``mcpServers`` of ``~/.claude.json`` (user) or ``.mcp.json``
  (project); hooks in ``.claude/settings.json``; an instruction block in ``CLAUDE.md``.
- Codex: a ``[mcp_servers.headd]`` table in ``~/.codex/config.toml`` (or the project's
  ``.codex/config.toml``) between marker comments; an instruction block in ``AGENTS.md``.
- Cursor: ``mcpServers`` of ``~/.cursor/mcp.json`` (or ``.cursor/mcp.json``); for a project a
  rules file ``.cursor/rules/headd.mdc``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

from headd_client.integrations.pieces import ClaudeHooks, JsonKey, Piece, TextBlock, WholeFile
from headd_client.json_types import JsonObject, JsonValue

SERVER_NAME = "headd"
MD_START = "<!-- HEADD:START -->"
MD_END = "<!-- HEADD:END -->"
TOML_START = "# HEADD:START"
TOML_END = "# HEADD:END"

#: Claude Code hook events, the ``headctl hook`` event each runs, and its timeout (seconds).
CLAUDE_HOOKS = (
    ("SessionStart", "session-start", 10),
    ("UserPromptSubmit", "prompt-submit", 10),
    ("PreCompact", "pre-compact", 30),
    ("SessionEnd", "session-end", 30),
)


def instructions(store: Path) -> str:
    return (
        "## headd memory\n\n"
        f"You have a long-term memory store at `{store}`, served by the MCP server `headd` "
        "(tools `memory_search`, `memory_recall`, `memory_read`, `memory_write`, "
        "`memory_correct`, …).\n\n"
        "- Search first: before answering anything that may touch a past decision, incident, "
        "preference or person, call `memory_search` with a prose query (or `memory_recall` with "
        "`budget_chars` for a context pack).\n"
        "- Read before quoting: a hit is a guess; open the path with `memory_read` before you "
        "quote, cite or act on it. `memory_resolve` walks a moved or superseded path forward.\n"
        "- Write what is durable, one fact per memory: a decision and its reason, a correction, "
        "an incident and its fix, a stated preference. Use `memory_write_batch` for more than "
        "three, and `memory_correct` (not a second memory) to replace a fact.\n"
        "- Reinforce after use: `memory_reinforce` with `positive` or `negative`.\n\n"
        "Written by `headctl integrations install`; edit outside the markers."
    )


def headctl_command() -> list[str]:
    """The absolute command that runs ``headctl`` (GUI agents do not inherit a shell PATH)."""
    beside = Path(sys.executable).with_name("headctl")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("headctl")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "headd_client.headctl"]


def _mcp_args(command: list[str], store: Path) -> list[str]:
    return [*command[1:], "--store", str(store), "mcp"]


def mcp_entry(command: list[str], store: Path) -> JsonObject:
    args: list[JsonValue] = [*_mcp_args(command, store)]
    return {"command": command[0], "args": args}


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def pieces_for(
    client: str, scope: str, home: Path, root: Path, store: Path, command: list[str]
) -> list[Piece]:
    """Every piece ``install`` writes for ``client`` at ``scope`` (``root`` is the project)."""
    entry = mcp_entry(command, store)
    notes = instructions(store)
    base = home if scope == "user" else root
    if client == "claude":
        mcp_file = home / ".claude.json" if scope == "user" else root / ".mcp.json"
        settings = base / ".claude" / "settings.json"
        md = home / ".claude" / "CLAUDE.md" if scope == "user" else root / "CLAUDE.md"
        prefix = " ".join(shlex.quote(c) for c in [*command, "--store", str(store)])
        hooks = tuple(
            (event, f"{prefix} hook {name}", timeout) for event, name, timeout in CLAUDE_HOOKS
        )
        return [
            JsonKey(mcp_file, "mcp-entry", ("mcpServers", SERVER_NAME), entry),
            ClaudeHooks(settings, "hooks", hooks),
            TextBlock(md, "instruction-block", MD_START, MD_END, notes),
        ]
    if client == "codex":
        config = base / ".codex" / "config.toml"
        args = ", ".join(_toml_string(a) for a in _mcp_args(command, store))
        table = (
            f"[mcp_servers.{SERVER_NAME}]\ncommand = {_toml_string(command[0])}\nargs = [{args}]"
        )
        md = home / ".codex" / "AGENTS.md" if scope == "user" else root / "AGENTS.md"
        return [
            TextBlock(config, "mcp-entry", TOML_START, TOML_END, table),
            TextBlock(md, "instruction-block", MD_START, MD_END, notes),
        ]
    if client == "cursor":
        out: list[Piece] = [
            JsonKey(base / ".cursor" / "mcp.json", "mcp-entry", ("mcpServers", SERVER_NAME), entry)
        ]
        if scope == "project":
            rules = "---\ndescription: headd memory\nalwaysApply: true\n---\n" + notes + "\n"
            out.append(WholeFile(root / ".cursor" / "rules" / "headd.mdc", "rules", rules))
        return out
    raise ValueError(f"unknown client {client}")
