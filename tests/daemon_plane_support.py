"""Helpers for the SQLite-plane wiring tests: a Claude-Code-like transcript tree on disk."""

from __future__ import annotations

import json
from pathlib import Path

SLUG = "-home-user-proj"


def transcript_lines(session_id: str, prompt: str, *, prompt_uuid: str = "u-1") -> str:
    """A main transcript: one typed user prompt and one assistant answer, as Claude Code writes."""
    records = [
        {
            "type": "user",
            "uuid": prompt_uuid,
            "parentUuid": None,
            "sessionId": session_id,
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/home/user/proj",
            "gitBranch": "main",
            "version": "2.1.40",
            "message": {"role": "user", "content": prompt},
        },
        {
            "type": "assistant",
            "uuid": "a-1",
            "parentUuid": prompt_uuid,
            "sessionId": session_id,
            "timestamp": "2026-11-30T10:00:05.000Z",
            "message": {
                "model": "claude-opus-4-6",
                "role": "assistant",
                "content": [{"type": "text", "text": "Noted."}],
            },
        },
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


def write_transcript(root: Path, session_id: str, prompt: str) -> Path:
    path = root / "projects" / SLUG / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(transcript_lines(session_id, prompt), encoding="utf-8")
    return path
