"""mem0 OpenMemory's export: a zip holding ``memories.json`` or ``memories.jsonl.gz``.

Each memory has ``content``, ``metadata``, ``state``, ``categories``, ``app`` and timestamps.
Its content is the claim (the title its first words), its categories its tags, its app the
provenance (a tag ``app-<name>`` and the provenance line's file), and a memory whose state is
``archived`` or ``deleted`` lands archived. The zip is read without extracting anything: a
member's size is checked before it is read, so a zip bomb is refused by its declared size.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from headd.importers.model import MAX_ITEM_CHARS, Item, Parsed, Skipped, short_title

SOURCE = "openmemory"
MEMBERS = ("memories.json", "memories.jsonl.gz", "memories.jsonl")
#: The export as a whole may be large; each memory is still capped (``MAX_ITEM_CHARS``).
MAX_EXPORT_BYTES = 512 * 1024 * 1024
ARCHIVED_STATES = frozenset({"archived", "deleted"})


def _rows(root: Path) -> Iterator[Any]:
    if root.suffix == ".zip" or zipfile.is_zipfile(root):
        with zipfile.ZipFile(root) as archive:
            members = {Path(info.filename).name: info for info in archive.infolist()}
            for name in MEMBERS:
                info = members.get(name)
                if info is None:
                    continue
                if info.file_size > MAX_EXPORT_BYTES:
                    raise ValueError(f"{name} is too large ({info.file_size:,} bytes)")
                data = archive.read(info)
                yield from _decode(name, data)
                return
        raise ValueError(f"the zip holds none of {', '.join(MEMBERS)}")
    if root.stat().st_size > MAX_EXPORT_BYTES:
        raise ValueError("the export is too large")
    yield from _decode(root.name, root.read_bytes())


def _decode(name: str, data: bytes) -> Iterator[Any]:
    if name.endswith(".gz"):
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            data = fh.read(MAX_EXPORT_BYTES + 1)
        if len(data) > MAX_EXPORT_BYTES:
            raise ValueError(f"{name} inflates past {MAX_EXPORT_BYTES:,} bytes")
    text = data.decode("utf-8")
    if name.endswith(".json"):
        loaded = json.loads(text)
        yield from loaded.get("memories", []) if isinstance(loaded, dict) else loaded
        return
    for line in text.splitlines():
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                yield None


def parse(root: Path) -> Parsed:
    parsed = Parsed()
    try:
        rows = list(_rows(root))
    except (ValueError, OSError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        parsed.skipped.append(Skipped(root.name, f"not a readable export: {exc}"))
        return parsed
    for number, row in enumerate(rows, start=1):
        what = f"{root.name}#{number}"
        if not isinstance(row, dict) or not isinstance(row.get("content"), str):
            parsed.skipped.append(Skipped(what, "not a memory (no content)"))
            continue
        content = " ".join(row["content"].split())
        if not content:
            parsed.skipped.append(Skipped(what, "empty content"))
            continue
        if len(content) > MAX_ITEM_CHARS:
            parsed.skipped.append(Skipped(what, f"too large ({len(content):,} characters)"))
            continue
        app = row.get("app") if isinstance(row.get("app"), str) else None
        if isinstance(row.get("app"), dict):
            app = str(row["app"].get("name") or "") or None
        raw_categories = row.get("categories")
        categories: list[Any] = raw_categories if isinstance(raw_categories, list) else []
        ident = str(row.get("id") or hashlib.sha256(content.encode()).hexdigest()[:16])
        state = str(row.get("state") or "active").lower()
        created = row.get("created_at")
        parsed.items.append(
            Item(
                source=SOURCE,
                file=f"{root.name} memory {ident}" + (f" from {app}" if app else ""),
                file_hash="sha256:" + hashlib.sha256(content.encode()).hexdigest()[:16],
                key=ident,
                title=short_title(" ".join(content.split()[:10])),
                type="semantic",
                claim=content,
                body=(f"Recorded {created}.",) if isinstance(created, str) and created else (),
                tags=(
                    SOURCE,
                    *(str(c) for c in categories if c),
                    *((f"app-{app}",) if app else ()),
                ),
                archived=state in ARCHIVED_STATES,
            )
        )
    return parsed
