"""A session's view: a base view with its pending ops applied in order.

The result is built by the same writers as a version (an :class:`IndexesBuilder` over the base's
indexes), so it shares every untouched record and bucket with the base. It keeps the base's sha:
an overlay has no commit of its own. The first op that does not parse or resolve raises, and
nothing of the batch is kept (the base is a value; there is nothing to roll back).

Ops (``headd.ops``):

- ``put``: parse the html at its path and insert it, replacing what was there.
- ``archive``: remove ``path``, insert ``html`` parsed at ``to`` as an archived record. The daemon
  fills ``to`` and ``html`` before the overlay sees the op.
- ``link``/``unlink``: splice one head link in or out, then re-parse; ``label``/``unlabel`` the
  same with a ``memhtml-entity`` meta. A link or label the file already carries changes nothing.
- ``move``: re-parse the record's current html (earlier ops' head edits included) at ``to``.

A record holds no file text (``headd.head.texts``): the text an op splices or re-parses is the
batch's own when an earlier op parsed it, else read from git by the record's blob id through the
``read_blob`` the caller passes.

Errors: :class:`PathNotFound` for a path the view does not hold, :class:`InvalidOp` for an op
that names an unknown rel, a malformed entity, an edge or entity the file does not carry, or a
move of an archived record, and the parser's own :class:`InvalidMemory` for html that does not
parse. Messages name paths and rules, never memory text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from headd.errors import InvalidOp, PathNotFound
from headd.head.indexes import NO_TEXTS, HeadView, IndexedView, IndexesBuilder, indexes_of
from headd.head.texts import ReadBlob, record_text
from headd.head.version import parse_record
from headd.memfile import head_edit
from headd.memfile.vocabulary import ALL_RELS
from headd.ops import Archive, Label, LinkOp, Move, OverlayOp, Put, Retask, Unlabel, UnlinkOp
from headd.record import TASK_STATUSES, Link, MemoryRecord

#: A label the overlay accepts: already normalized, a lowercase type, a colon, no space after it.
_WELL_FORMED_ENTITY = re.compile(r"[a-z0-9][a-z0-9_.-]*:[^\s:][^\r\n]*(?<!\s)")


def is_well_formed_entity(entity: str) -> bool:
    return _WELL_FORMED_ENTITY.fullmatch(entity) is not None


def _held(builder: IndexesBuilder, op_name: str, path: str) -> MemoryRecord:
    record = builder.get(path)
    if record is None:
        raise PathNotFound(
            f"{op_name} op names a path the view does not hold: {path}",
            {"op": op_name, "path": path},
        )
    return record


def _check_rel(op_name: str, rel: str) -> None:
    if rel not in ALL_RELS:
        raise InvalidOp(f"unknown link rel: {rel}", {"op": op_name, "rel": rel})


class _Batch:
    """One overlay call's builder and the file texts of the records it parses."""

    __slots__ = ("builder", "read_blob", "texts")

    def __init__(
        self, builder: IndexesBuilder, texts: dict[str, str], read_blob: ReadBlob | None
    ) -> None:
        self.builder = builder
        self.texts = texts
        self.read_blob = read_blob

    def text_of(self, record: MemoryRecord) -> str:
        return record_text(self.texts, record, self.read_blob)

    def parse(self, path: str, html: str) -> MemoryRecord:
        record = parse_record(path, html)
        self.texts[record.blob_sha] = html
        return record


def _apply(batch: _Batch, op: OverlayOp) -> None:
    builder = batch.builder
    if isinstance(op, Put):
        builder.insert(batch.parse(op.path, op.html))
    elif isinstance(op, Archive):
        if op.to is None or op.html is None:
            raise InvalidOp(
                f"archive op for {op.path} needs its destination and stamped html",
                {"op": "archive", "path": op.path},
            )
        _held(builder, "archive", op.path)
        record = batch.parse(op.to, op.html)
        builder.remove(op.path)
        builder.insert(msgspec.structs.replace(record, archived=True))
    elif isinstance(op, LinkOp):
        existing = _held(builder, "link", op.path)
        _check_rel("link", op.rel)
        if Link(op.rel, op.href) in existing.links:
            return
        html = head_edit.add_link(batch.text_of(existing), op.rel, op.href)
        builder.insert(batch.parse(op.path, html))
    elif isinstance(op, UnlinkOp):
        existing = _held(builder, "unlink", op.path)
        _check_rel("unlink", op.rel)
        if Link(op.rel, op.href) not in existing.links:
            raise InvalidOp(
                f"unlink op names an edge {op.path} does not carry: {op.rel} -> {op.href}",
                {"op": "unlink", "path": op.path, "rel": op.rel, "href": op.href},
            )
        html = head_edit.remove_link(batch.text_of(existing), op.rel, op.href)
        builder.insert(batch.parse(op.path, html))
    elif isinstance(op, Label):
        existing = _held(builder, "label", op.path)
        if not is_well_formed_entity(op.entity):
            raise InvalidOp(f"malformed entity: {op.entity}", {"op": "label", "entity": op.entity})
        if op.entity in existing.entities:
            return
        html = head_edit.add_entity(batch.text_of(existing), op.entity)
        builder.insert(batch.parse(op.path, html))
    elif isinstance(op, Unlabel):
        existing = _held(builder, "unlabel", op.path)
        if op.entity not in existing.entities:
            raise InvalidOp(
                f"unlabel op names an entity {op.path} does not carry: {op.entity}",
                {"op": "unlabel", "path": op.path, "entity": op.entity},
            )
        html = head_edit.remove_entity(batch.text_of(existing), op.entity)
        builder.insert(batch.parse(op.path, html))
    elif isinstance(op, Retask):
        existing = _held(builder, "retask", op.path)
        if existing.memory_type != "task" or op.status not in TASK_STATUSES:
            raise InvalidOp(
                f"retask op needs a task and a task status: {op.path} -> {op.status}",
                {"op": "retask", "path": op.path, "status": op.status},
            )
        if existing.task_status == op.status:
            return
        html = head_edit.set_meta(batch.text_of(existing), "memhtml-task-status", op.status)
        if op.at is not None:
            html = head_edit.set_meta(html, "memhtml-updated", op.at)
        builder.insert(batch.parse(op.path, html))
    elif isinstance(op, Move):
        existing = _held(builder, "move", op.path)
        if existing.archived:
            raise InvalidOp(
                f"move op names a path the view does not hold live: {op.path}",
                {"op": "move", "path": op.path},
            )
        record = batch.parse(op.to, batch.text_of(existing))
        builder.remove(op.path)
        builder.insert(record)
    else:  # pragma: no cover - the union is closed
        raise InvalidOp(f"unknown op {type(op).__name__}", {"op": type(op).__name__})


def with_overlay(
    view: HeadView | IndexedView, ops: Sequence[OverlayOp], read_blob: ReadBlob | None = None
) -> IndexedView:
    """``view`` with ``ops`` applied in order; raises on the first op that does not resolve.

    ``read_blob`` reads the text of a record parsed from git, for the ops that splice or
    re-parse one (link, unlink, label, unlabel, move); without it such an op on a record whose
    text is in git raises ``GitFailure``. The result keeps the texts of the files it parsed
    (its ``pending_texts``, the base's included) until a commit puts them in git.
    """
    base = indexes_of(view)
    pending = view.pending_texts if isinstance(view, IndexedView) else NO_TEXTS
    if not ops:
        return IndexedView(base, view.sha, pending)
    batch = _Batch(IndexesBuilder(base), dict(pending), read_blob)
    for op in ops:
        _apply(batch, op)
    return IndexedView(batch.builder.freeze(), view.sha, batch.texts)
