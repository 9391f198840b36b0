"""The transcript index keeps no credential: a prompt, a first prompt or an AI title that holds
one is indexed with the value replaced by its kind, searchable by its other words, and no byte
of the value is in the index's files.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``kept_head`` returns ``text[:limit]`` -> ``test_no_value_reaches_the_index``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from headd_plane.db import open_writer
from headd_plane.traces import traces_index, traces_search, traces_show
from support.secret_corpus import SECRETS

from headd.secrets import rules

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SID = "11111111-2222-4333-8444-555555555555"


def _record(kind: str, uuid: str, second: int, **fields: object) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "sessionId": SID,
            "timestamp": f"2026-08-01T10:00:{second:02d}.000Z",
            **fields,
        }
    )


def _values(text: str) -> list[str]:
    """Each credential of a corpus text, as the rules delimit it (a private key: each line)."""
    spans = rules._spans(text)
    return [line for s, e, _ in spans for line in text[s:e].split("\n") if len(line) >= 8]


def test_no_value_reaches_the_index(tmp_path: Path) -> None:
    records = [
        _record(
            "user",
            f"u{i}",
            i,
            promptId=f"P{i}",
            message={"role": "user", "content": f"please wire the gateway {i}: {text}"},
        )
        for i, (_, text) in enumerate(SECRETS)
    ]
    records.append(_record("ai-title", "t", 59, aiTitle=f"Gateway setup {SECRETS[1][1]}"))
    root = tmp_path / "claude"
    transcript = root / "projects" / "-home-dana-shop" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(r + "\n" for r in records), encoding="utf-8")

    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    try:
        report = traces_index(db.conn, root, NOW)
        assert report["files_read"] == 1
        heads = [
            r[0] for r in db.conn.execute("SELECT text_head FROM trace_prompts ORDER BY ordinal")
        ]
        assert len(heads) == len(SECRETS)
        for head, (kind, _) in zip(heads, SECRETS, strict=True):
            assert head.startswith("please wire the gateway") and f"[redacted:{kind}]" in head
        assert traces_search(db.conn, "gateway").hits[0].session_id == SID
        shown = msgspec.json.encode(traces_show(db.conn, SID)).decode()
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    for _, text in SECRETS:
        for value in _values(text):
            assert value.encode() not in stored, value[:6]
            assert value not in shown
