"""Find every transcript under a trace root, in each layout Claude Code has used.

``<root>/projects/<slug>/`` holds, per session:

- ``<sessionId>.jsonl`` — the main transcript (``kind = "session"``);
- ``<sessionId>/subagents/agent-<agentId>.jsonl`` — a subagent sidecar, 2.1.x layout
  (``kind = "subagent"``, session from the directory name);
- ``agent-<agentId>.jsonl`` directly in the slug directory — the older flat layout
  (``kind = "flat_agent"``): the path does not name the session, its records do.

``*.meta.json`` files and ``subagents/workflows/`` are not transcripts and are not descended into.
A file that vanishes between listing and stat is left out; an unreadable directory is skipped
with a warning, never fatal.
"""

from __future__ import annotations

import logging
import os
from typing import Literal

import msgspec

log = logging.getLogger(__name__)

PROJECTS_DIR = "projects"
SUBAGENTS_DIR = "subagents"

Kind = Literal["session", "subagent", "flat_agent"]


class FoundFile(msgspec.Struct, frozen=True):
    path: str
    slug: str
    kind: Kind
    #: The session the path names (None for a flat agent file).
    session_hint: str | None
    agent_id: str | None
    size: int
    mtime_ms: int


def _agent_id(name: str) -> str | None:
    if name.startswith("agent-") and name.endswith(".jsonl") and len(name) > len("agent-.jsonl"):
        return name[len("agent-") : -len(".jsonl")]
    return None


def _scan(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        log.warning("traces: cannot list %s: %s", path, exc.strerror)
        return []


def _stat(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    try:
        st = entry.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns // 1_000_000


def discover(root: str) -> list[FoundFile]:
    """Every transcript file under ``root/projects``, sorted by path (a stable scan order)."""
    found: list[FoundFile] = []
    for slug_entry in _scan(os.path.join(root, PROJECTS_DIR)):
        if not slug_entry.is_dir(follow_symlinks=False):
            continue
        slug = slug_entry.name
        for entry in _scan(slug_entry.path):
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                for side in _scan(os.path.join(entry.path, SUBAGENTS_DIR)):
                    agent = _agent_id(side.name)
                    if agent is None or not side.is_file(follow_symlinks=False):
                        continue
                    st = _stat(side)
                    if st is not None:
                        found.append(
                            FoundFile(side.path, slug, "subagent", name, agent, st[0], st[1])
                        )
                continue
            if not name.endswith(".jsonl") or not entry.is_file(follow_symlinks=False):
                continue
            st = _stat(entry)
            if st is None:
                continue
            agent = _agent_id(name)
            if agent is not None:
                found.append(FoundFile(entry.path, slug, "flat_agent", None, agent, st[0], st[1]))
            else:
                found.append(
                    FoundFile(entry.path, slug, "session", name[: -len(".jsonl")], None, *st)
                )
    found.sort(key=lambda f: f.path)
    return found
