"""``headctl hook EVENT``: what Claude Code's hooks run, reading the hook's JSON on stdin.

``session-start`` and ``prompt-submit`` print a recall block (the memories the head finds for the
project or the prompt) that Claude Code adds to the context; ``pre-compact`` and ``session-end``
ask the daemon to index transcripts, so ``trace_search`` finds the session. Hooks only read
memories: none of them writes one.

A hook must never block or break a turn, so every failure (no daemon, bad JSON, a slow answer)
prints nothing and exits 0, and the recall hooks answer within ``RECALL_BOUND_S`` or not at all:
the work runs on a daemon thread and the process exits when the bound passes. Hooks never start
a daemon (that would not fit the bound); the MCP server does.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import msgspec

from headd_client.json_types import JsonIn, JsonInObject, JsonObject

#: The hard bound on a recall hook, start to exit.
RECALL_BOUND_S = 1.5
#: Transcript indexing may take longer; Claude Code's hook timeout for it is 30 s.
INDEX_BOUND_S = 25.0
CLAIM_CHARS = 240
#: The share of a prompt a memory must cover (``headd.head.relevance``) to be injected, and a
#: prompt of fewer than two content words injects nothing: chosen on LoCoMo's dev questions
#: against unrelated prompts (docs/design/mcp.md, "The prompt hook's relevance floor").
RELEVANCE_FLOOR = 0.4


class Hit(msgspec.Struct):
    """What a recall block shows of a search hit (``headd.wire.answers.SearchHit``): read
    through this small shape rather than the typed call, whose imports would cost every prompt
    a few tens of milliseconds of the hook's bound."""

    path: str
    title: str = ""
    claim: str = ""


class _Found(msgspec.Struct):
    hits: list[Hit]


def recall_block(hits: Sequence[Hit], heading: str) -> str:
    """The text a recall hook prints: one line per memory, or nothing when there is none."""
    if not hits:
        return ""
    lines = ['<memory-recall source="headd">', heading]
    for hit in hits:
        claim = " ".join(hit.claim.split())[:CLAIM_CHARS]
        lines.append(f"- {hit.path}: {hit.title} — {claim}")
    lines.append("Open a path with memory_read before quoting it.")
    lines.append("</memory-recall>")
    return "\n".join(lines) + "\n"


def project_query(payload: JsonInObject) -> str:
    """What a session start recalls for: the project directory's name, as words."""
    cwd = str(payload.get("cwd") or "")
    name = Path(cwd).name if cwd else ""
    return " ".join(re.split(r"[-_.\s]+", name)).strip()


def trace_root_of(transcript_path: JsonIn) -> str | None:
    """``~/.claude`` from ``~/.claude/projects/<project>/<session>.jsonl``."""
    if not transcript_path or not isinstance(transcript_path, str):
        return None
    path = Path(transcript_path)
    for parent in path.parents:
        if parent.name == "projects":
            return str(parent.parent)
    return None


def process_age_s() -> float:
    """Seconds since this process started (Linux ``/proc``), so the bound covers start-up too."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - started)
    except (OSError, ValueError, IndexError):
        return 0.3


def _work(event: str, payload: JsonInObject, socket_path: Path, limit: int, timeout: float) -> str:
    from headd_client.sync_client import Client

    with Client(socket_path, timeout=timeout) as client:
        if event in ("session-start", "prompt-submit"):
            if event == "prompt-submit":
                query = str(payload.get("prompt") or "").strip()
                heading = "Memories that may bear on this prompt:"
            else:
                query = project_query(payload)
                heading = "Memories about this project:"
            if not query:
                return ""
            params: JsonObject = {"query": query, "limit": limit}
            if event == "prompt-submit":
                params["relevance_floor"] = RELEVANCE_FLOOR
            found = msgspec.convert(client.call("search", params), _Found)
            return recall_block(found.hits, heading)
        root = trace_root_of(payload.get("transcript_path"))
        client.call("traces.index", {"trace_root": root} if root else {})
        return ""


def run_hook(
    event: str,
    store: Path,
    socket_path: Path,
    environ: Mapping[str, str],
    stdin: TextIO,
    stdout: TextIO,
    *,
    limit: int = 5,
) -> int:
    """Run one hook; always exit 0, print only a complete answer made within the bound."""
    bound = RECALL_BOUND_S if event in ("session-start", "prompt-submit") else INDEX_BOUND_S
    box: list[str] = []

    def target() -> None:
        try:
            raw = stdin.read()
            payload = json.loads(raw) if raw.strip() else {}
            if isinstance(payload, dict):
                box.append(_work(event, payload, socket_path, limit, bound))
        except BaseException:  # a hook prints nothing on any failure
            return

    worker = threading.Thread(target=target, name="headctl-hook", daemon=True)
    worker.start()
    worker.join(max(0.05, bound - process_age_s()))
    if worker.is_alive():
        stdout.flush()
        os._exit(0)  # the bound passed: leave now, printing nothing, whatever the worker does
    if box and box[0]:
        stdout.write(box[0])
        stdout.flush()
    return 0
