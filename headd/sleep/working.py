"""The working copy a run edits: every record of one version, each with its file text on demand.

Phases are pure functions from a ``Working`` (read-only to them) to a ``Change``; the run applies
each change here and commits exactly the change, so a phase's commit is its own edit and nothing
else. Texts are read from blobs lazily: most phases read heads only through the parsed records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from headd.record import MemoryRecord
from headd.store.ports import parse_memory

#: A touched memory's classification, as review shows it.
MOVED = "moved"
FOLDED = "folded"
ARCHIVED = "archived"
REPOINTED = "repointed"
STAMPED = "stamped"


@dataclass(frozen=True, slots=True)
class Touch:
    """One memory a phase changed: how, and where it went (for moves, folds and evictions)."""

    path: str
    kind: str
    to: str | None = None
    #: The live memory a fold went into.
    into: str | None = None


@dataclass
class Change:
    """One phase's edit: files written (path → text), paths removed, counts and touches."""

    writes: dict[str, str] = field(default_factory=dict)
    removes: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    touches: list[Touch] = field(default_factory=list)
    #: Derived edges (source, target, cosine): reported, never committed.
    edges: list[tuple[str, str, float]] = field(default_factory=list)

    def move(self, old: str, new: str, html: str) -> None:
        self.removes.add(old)
        self.writes[new] = html

    @property
    def empty(self) -> bool:
        return not self.writes and not self.removes


class Working:
    """Records by path (all of them, archived ones too) and their texts, as of the last change."""

    def __init__(self, records: Iterable[MemoryRecord], read_blob: Callable[[str], str]) -> None:
        self._records: dict[str, MemoryRecord] = {record.path: record for record in records}
        self._texts: dict[str, str] = {}
        self._read_blob = read_blob
        self.others: dict[str, str] = {}

    def record(self, path: str) -> MemoryRecord | None:
        return self._records.get(path)

    def __contains__(self, path: object) -> bool:
        return path in self._records or path in self.others

    def records(self) -> Iterator[MemoryRecord]:
        return iter(self._records.values())

    def active(self) -> list[MemoryRecord]:
        """Active records in path order (the order every phase walks, so runs are deterministic)."""
        return sorted((r for r in self._records.values() if not r.archived), key=lambda r: r.path)

    def text(self, path: str) -> str:
        held = self._texts.get(path)
        if held is not None:
            return held
        record = self._records[path]
        text = self._read_blob(record.blob_sha)
        self._texts[path] = text
        return text

    def apply(self, change: Change) -> None:
        """Take ``change`` in: removed paths go, written memory files are parsed again."""
        for path in change.removes:
            self._records.pop(path, None)
            self._texts.pop(path, None)
            self.others.pop(path, None)
        for path, text in change.writes.items():
            if path.endswith(".html") and not path.startswith("."):
                self._records[path] = parse_memory(path, text)
                self._texts[path] = text
            else:
                self.others[path] = text


def inbound_index(records: Iterable[MemoryRecord]) -> Mapping[str, list[tuple[str, str]]]:
    """Target path → [(source path, rel)] over every authored link (hrefs root-relative)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for record in records:
        for link in record.links:
            target = link.href[1:] if link.href.startswith("/") else link.href
            out.setdefault(target, []).append((record.path, link.rel))
    return out
