"""The parser against the anchor corpus: every field memhtml 0.15.1's own index holds, every file.

The goldens are the ``files`` rows (and child rows) of the tool's ``index.db``; ``reads.jsonl`` is
``memhtml read`` for every file under the four buckets; ``skipped.json`` lists the files the tool
refused, with its reasons. Nothing here is hard-coded: every expectation comes from those files.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pygit2
import pytest
from support.data import ANCHOR

from headd.errors import InvalidMemory
from headd.memfile.hashes import blob_sha_of, chunk_id_of, content_hash_of
from headd.memfile.parse import parse_memory
from headd.memfile.vocabulary import rel_class_of
from headd.record import MemoryRecord


def _jsonl(name: str) -> list[dict[str, Any]]:
    with open(ANCHOR / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def parsed(anchor_store: Path, anchor_goldens: dict[str, dict]) -> dict[str, MemoryRecord]:
    return {path: parse_memory(path, (anchor_store / path).read_bytes()) for path in anchor_goldens}


def _golden_view(record: MemoryRecord) -> dict[str, Any]:
    """Our record in the goldens' vocabulary (column names and 0/1 flags)."""
    return {
        "path": record.path,
        "blob_sha": record.blob_sha,
        "content_hash": record.content_hash,
        "memory_type": record.memory_type,
        "title": record.title,
        "gist": record.claim,
        "body_text": record.body_text,
        "fts_text": record.fts_text,
        "disclosure_text": record.disclosure_text,
        "para": record.para,
        "workspace": record.workspace,
        "confidence": record.confidence,
        "importance": record.importance,
        "archived": int(record.archived),
        "origin_path": record.origin_path,
        "word_count": record.word_count,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "event_at": record.event_at,
        "archived_at": record.archived_at,
        "valid_from": record.valid_from,
        "valid_until": record.valid_until,
        "reprieves": record.reprieves,
        "needs_revision": int(record.needs_revision),
        "author": record.author,
        "session_id": record.session_id,
        "prompt_id": record.prompt_id,
        "turn_uuid": record.turn_uuid,
        "task_status": record.task_status,
        "due_at": record.due,
        "frame_key": record.frame_key,
        "meta_content_hash": record.meta_content_hash,
        "content_hash_matches_meta": record.meta_content_hash == record.content_hash,
        "tags": list(record.tags),
        "entities": [[row.entity_type, row.entity_name] for row in record.entity_rows],
        "facets": [[f.name, f.value, f.numeric_value] for f in record.facets],
        "citations": [[c.text, c.href] for c in record.citations],
        "edges": [
            [link.rel, link.href.lstrip("/"), rel_class_of(link.rel)] for link in record.links
        ],
    }


def test_every_golden_field_matches(
    parsed: dict[str, MemoryRecord], anchor_goldens: dict[str, dict]
) -> None:
    assert len(anchor_goldens) == 241
    mismatches: list[str] = []
    compared: set[str] = set()
    for path, golden in anchor_goldens.items():
        mine = _golden_view(parsed[path])
        for key, value in mine.items():
            assert key in golden, f"goldens have no column {key}"
            compared.add(key)
            if golden[key] != value:
                mismatches.append(f"{path} {key}: golden {golden[key]!r} != ours {value!r}")
    assert mismatches == []
    # Every column the goldens hold is compared here or in the chunk / warning tests below.
    elsewhere = {"chunks", "read_warnings", "blob_sha_matches_head_tree"}
    assert set(next(iter(anchor_goldens.values()))) - compared == elsewhere


def test_chunks_match_the_rows_of_their_content_hash(
    parsed: dict[str, MemoryRecord], anchor_goldens: dict[str, dict]
) -> None:
    """Chunk rows are keyed by content hash: duplicates share the one set another file owns."""
    rows_by_hash: dict[str, list[dict]] = defaultdict(list)
    for golden in anchor_goldens.values():
        if golden["chunks"]:
            assert not rows_by_hash[golden["content_hash"]], "two owners of one chunk set"
            rows_by_hash[golden["content_hash"]] = golden["chunks"]
    borrowed = 0
    for path, golden in anchor_goldens.items():
        record = parsed[path]
        ours = [
            {
                "ordinal": c.ordinal,
                "text": c.text,
                "char_count": c.char_count,
                "chunk_id": chunk_id_of(record.content_hash, c.ordinal),
            }
            for c in record.chunks
        ]
        if not golden["chunks"]:
            borrowed += 1
        assert ours == rows_by_hash[golden["content_hash"]], path
    assert sum(len(rows) for rows in rows_by_hash.values()) == 247
    assert borrowed > 0  # the corpus does hold duplicate-content files


def test_long_bodies_are_chunked_in_utf16_units(parsed: dict[str, MemoryRecord]) -> None:
    multi = [r for r in parsed.values() if len(r.chunks) > 1]
    assert multi, "the corpus holds multi-chunk files"
    for record in multi:
        for chunk in record.chunks:
            assert chunk.char_count <= 1800
            assert chunk.char_count == len(chunk.text.encode("utf-16-le")) // 2


def test_warnings_match_memhtml_read(
    parsed: dict[str, MemoryRecord], anchor_goldens: dict[str, dict], anchor_store: Path
) -> None:
    some_warn = False
    for path, golden in anchor_goldens.items():
        if golden["read_warnings"] is None:
            # `memhtml read` decodes without stripping a BOM and then refuses the file; its
            # indexer strips it (TextDecoder) and indexes it. We follow the indexer.
            assert (anchor_store / path).read_bytes().startswith(b"\xef\xbb\xbf"), path
            assert parsed[path].warnings == ()
            continue
        some_warn = some_warn or bool(golden["read_warnings"])
        assert list(parsed[path].warnings) == golden["read_warnings"], path
    assert some_warn


def _authored(values: list[str]) -> list[str]:
    """The contract's reading of repeated head values: trimmed, empty and duplicates dropped."""
    out: list[str] = []
    for value in (v.strip() for v in values):
        if value and value not in out:
            out.append(value)
    return out


def test_memhtml_read_agrees_on_every_readable_file(anchor_store: Path) -> None:
    reads = _jsonl("reads.jsonl")
    assert len(reads) > 241
    refused = 0
    for row in reads:
        path = row["path"]
        data = (anchor_store / path).read_bytes()
        if row["rc"] != 0:
            error = row["envelope"]["error"]
            if data.startswith(b"\xef\xbb\xbf"):
                parse_memory(path, data)  # accepted: see test_warnings_match_memhtml_read
                continue
            with pytest.raises(InvalidMemory) as caught:
                parse_memory(path, data)
            assert "invalid memory: " + "; ".join(caught.value.violations) == error
            assert row["envelope"]["code"] == caught.value.code
            refused += 1
            continue
        detail = row["envelope"]["data"]
        record = parse_memory(path, data)
        assert record.title == detail["title"]
        assert record.claim == detail["gist"]
        assert record.body_text == detail["body"]
        assert list(record.tags) == _authored(detail["tags"])
        assert list(record.entities) == _authored(detail["entities"])
        assert list(record.warnings) == detail["warnings"]
        assert record.memory_type == detail["metas"]["memoryType"]
        assert record.status == detail["metas"]["status"]
        links = []
        for link in detail["links"]:
            pair = (link["rel"], link["href"])
            if link["href"].lstrip("/") != path and pair not in links:
                links.append(pair)
        assert [(link.rel, link.href) for link in record.links] == links
    assert refused == 9


def test_skipped_invalid_files_are_refused_with_the_tools_reasons(anchor_store: Path) -> None:
    with open(ANCHOR / "skipped.json", encoding="utf-8") as fh:
        skipped = json.load(fh)
    invalid = [row for row in skipped if row["kind"] == "invalid"]
    assert len(invalid) == 9
    for row in invalid:
        with pytest.raises(InvalidMemory) as caught:
            parse_memory(row["path"], (anchor_store / row["path"]).read_bytes())
        assert list(caught.value.violations) == row["violations"]
        assert caught.value.message == row["read_error"]
        assert caught.value.details["violations"] == row["violations"]


def test_head_only_edits_move_the_blob_and_keep_the_content_hash(anchor_store: Path) -> None:
    repo = pygit2.Repository(str(anchor_store))
    edits = _jsonl("head-only-edits.jsonl")
    assert len(edits) == 33
    for edit in edits:
        for side in ("before", "after"):
            blob = repo.get(edit[f"blob_{side}"])
            assert isinstance(blob, pygit2.Blob)
            data = blob.data
            assert blob_sha_of(data) == edit[f"blob_{side}"]
            assert content_hash_of(data.decode("utf-8")) == edit[f"content_hash_{side}"]
        assert (edit["content_hash_before"] == edit["content_hash_after"]) == edit[
            "content_hash_unchanged"
        ]


def test_blob_sha_matches_the_head_tree(
    anchor_store: Path, parsed: dict[str, MemoryRecord]
) -> None:
    repo = pygit2.Repository(str(anchor_store))
    tree = repo.head.peel(pygit2.Commit).tree
    for path, record in parsed.items():
        assert str(tree[path].id) == record.blob_sha
