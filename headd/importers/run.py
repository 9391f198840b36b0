"""Land an importer's items: check each one here, then write them through sessions, one commit
per batch the session cap allows, and say what happened.

Every item is rendered and parsed here first (``render_write``, ``parse_memory``) and passed
through the write door's own secret check (``op_findings``), so an item that would fail is
skipped with its reason instead of refusing the batch it rides in: the daemon's ``apply`` is all
or nothing. A re-import writes nothing new: an item whose provenance key already names an active
memory with the same content hash is ``unchanged``; one whose content differs (its source was
edited) is a correction (the old memory archived, the new one linked ``supersedes`` to it); any
other content already active is answered ``deduped`` by the daemon itself.

Writes go in two rounds: the memories (and the archives of corrected ones), then the links
between them and the archives of items their source marks archived, since a link needs both
paths and a path is chosen when the write lands. When both rounds fit one session (``BATCH``
ops) they are one commit; else each round commits every ``BATCH`` ops, so a 10,000-item import
is ``ceil(n / BATCH)`` commits plus the link round's.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import msgspec

from headd.errors import HeaddError
from headd.importers.model import MAX_ITEM_CHARS, Item, Parsed, Skipped
from headd.memfile.archive import archive_path
from headd.ops import Archive, LinkOp, Write
from headd.secrets.door import op_findings
from headd.store.ports import parse_memory
from headd.store.resolve import render_write
from headd.store.validate import BATCH_CAP

#: Ops per session commit: the session cap.
BATCH = BATCH_CAP
#: Titles a report lists.
SHOWN_TITLES = 8


class Sink(Protocol):
    """Where ops go: the daemon's session methods, or a session manager in this process."""

    def call(self, method: str, params: Mapping[str, Any]) -> Any: ...


@dataclass
class Report:
    source: str
    dry_run: bool
    new: int = 0
    corrected: int = 0
    unchanged: int = 0
    deduped: int = 0
    archived: int = 0
    links: int = 0
    commits: list[str] = field(default_factory=list)
    types: Counter[str] = field(default_factory=Counter)
    titles: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    broken_links: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            "new": self.new,
            "corrected": self.corrected,
            "unchanged": self.unchanged,
            "deduped": self.deduped,
            "archived": self.archived,
            "links": self.links,
            "commits": self.commits,
            "types": dict(sorted(self.types.items())),
            "titles": self.titles,
            "skipped": [{"what": s.what, "reason": s.reason} for s in self.skipped],
            "broken_links": [{"from": k, "target": t} for k, t in self.broken_links],
        }


def write_op(item: Item, workspace: str | None) -> Write:
    return Write(
        title=item.title,
        type=item.type,
        claim=item.claim,
        body=[*item.body, item.provenance],
        tags=list(dict.fromkeys(t for t in item.tags if t)),
        entities=[*item.entities, item.key_entity],
        workspace=workspace if workspace is not None else item.workspace,
    )


def check_item(item: Item, op: Write, now: datetime) -> tuple[str | None, str]:
    """(content hash, "") when the item can be written, else (None, the reason)."""
    size = len(item.claim) + sum(len(p) for p in item.body)
    if size > MAX_ITEM_CHARS:
        return None, f"too large ({size:,} characters; the limit is {MAX_ITEM_CHARS:,})"
    findings = op_findings(0, op)
    if findings:
        f = findings[0]
        where = f"{f['field']} line {f['line']} column {f['column']}"
        return None, f"holds a credential ({f['kind']} at {where}); not imported"
    try:
        put = render_write(op, frozenset(), now)
        record = parse_memory(put.path, put.html)
    except HeaddError as exc:
        return None, f"not a valid memory: {exc.message}"
    return record.content_hash, ""


@dataclass
class _Planned:
    item: Item
    op: Write
    content_hash: str
    replaces: str | None = None  # the active path a correction archives


def _active(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if not p.startswith("archive/")]


#: Lookups sent in one JSON-RPC batch when the sink takes batches (the daemon's client).
LOOKUP_BATCH = 256


def lookup(sink: Sink, method: str, params: Sequence[Mapping[str, Any]]) -> list[Any]:
    """``method`` called once per params, in order: in JSON-RPC batches when the sink sends
    them (a call per item costs a round trip each), else one call at a time."""
    batch = getattr(sink, "batch", None)
    if batch is None:
        return [sink.call(method, p) for p in params]
    out: list[Any] = []
    for start in range(0, len(params), LOOKUP_BATCH):
        answers = batch([(method, p) for p in params[start : start + LOOKUP_BATCH]])
        for answer in answers:
            if answer.error is not None:
                message = str(answer.error.get("message", "lookup failed"))
                raise HeaddError(f"{method}: {message}", {"method": method})
            out.append(answer.result)
    return out


def plan(
    parsed: Parsed, sink: Sink, report: Report, now: datetime, workspace: str | None
) -> tuple[list[_Planned], dict[str, str]]:
    """What to write, and the paths of the items already in the store (by key)."""
    report.skipped.extend(parsed.skipped)
    report.broken_links.extend(parsed.broken_links)
    checked: list[tuple[Item, Write, str]] = []
    seen_hashes: dict[str, str] = {}
    for item in parsed.items:
        op = write_op(item, workspace)
        content_hash, reason = check_item(item, op, now)
        if content_hash is None:
            report.skipped.append(Skipped(item.key, reason))
            continue
        if content_hash in seen_hashes:
            same = seen_hashes[content_hash]
            report.skipped.append(Skipped(item.key, f"the same content as {same}"))
            continue
        seen_hashes[content_hash] = item.key
        checked.append((item, op, content_hash))
    held = lookup(sink, "by_entity", [{"entity": item.key_entity} for item, _, _ in checked])
    # An item its source marks archived was archived by the import that landed it.
    existing = [
        list(answer["paths"]) if item.archived else _active(answer["paths"])
        for (item, _, _), answer in zip(checked, held, strict=True)
    ]
    to_read = sorted({p for paths in existing for p in paths})
    records = lookup(sink, "read", [{"path": p} for p in to_read])
    hashes = {
        p: (a.get("record") or {}).get("content_hash")
        for p, a in zip(to_read, records, strict=True)
    }
    planned: list[_Planned] = []
    known: dict[str, str] = {}
    for (item, op, content_hash), paths in zip(checked, existing, strict=True):
        matching = [path for path in paths if hashes.get(path) == content_hash]
        if matching:
            report.unchanged += 1
            known[item.key] = matching[0]
            continue
        active = _active(paths)
        planned.append(_Planned(item, op, content_hash, replaces=active[0] if active else None))
    for p in planned:
        report.types[p.item.type] += 1
        if len(report.titles) < SHOWN_TITLES:
            report.titles.append(p.item.title)
        if p.replaces is None:
            report.new += 1
        else:
            report.corrected += 1
    return planned, known


def _batches(groups: Sequence[tuple[str, list[Any]]]) -> Iterable[Groups]:
    """Each item's ops (kept together) packed into batches of at most ``BATCH`` ops."""
    batch: list[tuple[str, list[Any]]] = []
    size = 0
    for group in groups:
        if batch and size + len(group[1]) > BATCH:
            yield batch
            batch, size = [], 0
        batch.append(group)
        size += len(group[1])
    if batch:
        yield batch


class _Session:
    """One import session: ops applied (all or nothing, each apply), then one commit."""

    def __init__(self, sink: Sink, report: Report) -> None:
        self.sink = sink
        self.report = report
        self.id = sink.call("session.open", {})["session"]

    def apply(self, ops: list[Any]) -> list[str]:
        """The path each op answered (its write's, or the one a deduped write names)."""
        if not ops:
            return []
        params = {"session": self.id, "ops": msgspec.to_builtins(ops)}
        applied = self.sink.call("session.apply", params)
        if applied.get("violations"):
            kinds = sorted({str(v.get("kind")) for v in applied["violations"]})
            raise HeaddError(f"the import batch was refused ({', '.join(kinds)})", applied)
        self.report.deduped += len(applied.get("deduped") or ())
        return list(applied.get("paths") or ())

    def commit(self, message: str) -> None:
        committed = self.sink.call("session.commit", {"session": self.id, "message": message})
        if committed.get("outcome") != "committed":
            outcome = committed.get("outcome")
            raise HeaddError(f"the import commit was not landed ({outcome})", committed)
        if committed.get("paths"):
            self.report.commits.append(str(committed["sha"]))

    def close(self) -> None:
        self.sink.call("session.close", {"session": self.id})


@contextlib.contextmanager
def _session(sink: Sink, report: Report) -> Iterator[_Session]:
    session = _Session(sink, report)
    try:
        yield session
    except BaseException:
        session.close()
        raise


Groups = list[tuple[str, list[Any]]]


def _flat(batch: Groups) -> list[Any]:
    return [op for _, ops in batch for op in ops]


def _record_paths(batch: Groups, answered: Sequence[str], paths: dict[str, str]) -> None:
    position = 0
    for key, ops in batch:
        position += len(ops)
        paths[key] = answered[position - 1]  # the write is each group's last op


def run_import(
    parsed: Parsed,
    sink: Sink,
    *,
    source: str,
    now: datetime,
    dry_run: bool = False,
    workspace: str | None = None,
) -> Report:
    """Plan, then land: one session and one commit when the writes and their links fit the
    session cap, else a commit per batch and the links after."""
    report = Report(source=source, dry_run=dry_run)
    planned, known = plan(parsed, sink, report, now, workspace)
    if dry_run or not planned:
        return report
    groups: Groups = []
    for p in planned:
        archive = [Archive(path=p.replaces)] if p.replaces is not None else []
        groups.append((p.item.key, [*archive, p.op]))
    paths = dict(known)
    writes = sum(len(ops) for _, ops in groups)
    later = sum((p.replaces is not None) + len(p.item.links) + p.item.archived for p in planned)
    if writes + later <= BATCH:
        with _session(sink, report) as session:
            _record_paths(groups, session.apply(_flat(groups)), paths)
            session.apply(_flat(_second_round(planned, paths, now, report)))
            session.commit(f"import {source}: {len(planned)} memories")
        return report
    total = -(-writes // BATCH)
    for number, batch in enumerate(_batches(groups), start=1):
        with _session(sink, report) as session:
            _record_paths(batch, session.apply(_flat(batch)), paths)
            session.commit(f"import {source}: batch {number} of {total}")
    for number, batch in enumerate(_batches(_second_round(planned, paths, now, report)), 1):
        with _session(sink, report) as session:
            session.apply(_flat(batch))
            session.commit(f"import {source}: links and archives {number}")
    return report


def _second_round(
    planned: Sequence[_Planned], paths: Mapping[str, str], now: datetime, report: Report
) -> Groups:
    """What needs the landed paths: supersedes links of corrections, the items' own links,
    and the archives of items their source marks archived."""
    out: Groups = []
    for p in planned:
        own = paths.get(p.item.key)
        if own is None:
            continue
        group: list[Any] = []
        if p.replaces is not None:
            href = "/" + archive_path(p.replaces, now.year)
            group.append(LinkOp(path=own, rel="supersedes", href=href))
        for rel, target in p.item.links:
            target_path = paths.get(target)
            if target_path is not None and target_path != own:
                group.append(LinkOp(path=own, rel=rel, href="/" + target_path))
        report.links += len(group)
        if p.item.archived and not own.startswith("archive/"):
            group.append(Archive(path=own))
            report.archived += 1
        if group:
            out.append((p.item.key, group))
    return out
