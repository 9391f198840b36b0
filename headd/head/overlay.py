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
from headd.head.indexes import HeadView, IndexedView, IndexesBuilder, indexes_of
from headd.head.version import parse_record
from headd.memfile import head_edit
from headd.memfile.vocabulary import ALL_RELS
from headd.ops import Archive, Label, LinkOp, Move, OverlayOp, Put, Unlabel, UnlinkOp
from headd.record import Link, MemoryRecord

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


def _apply(builder: IndexesBuilder, op: OverlayOp) -> None:
    if isinstance(op, Put):
        builder.insert(parse_record(op.path, op.html))
    elif isinstance(op, Archive):
        if op.to is None or op.html is None:
            raise InvalidOp(
                f"archive op for {op.path} needs its destination and stamped html",
                {"op": "archive", "path": op.path},
            )
        _held(builder, "archive", op.path)
        record = parse_record(op.to, op.html)
        builder.remove(op.path)
        builder.insert(msgspec.structs.replace(record, archived=True))
    elif isinstance(op, LinkOp):
        existing = _held(builder, "link", op.path)
        _check_rel("link", op.rel)
        if Link(op.rel, op.href) in existing.links:
            return
        builder.insert(parse_record(op.path, head_edit.add_link(existing.html, op.rel, op.href)))
    elif isinstance(op, UnlinkOp):
        existing = _held(builder, "unlink", op.path)
        _check_rel("unlink", op.rel)
        if Link(op.rel, op.href) not in existing.links:
            raise InvalidOp(
                f"unlink op names an edge {op.path} does not carry: {op.rel} -> {op.href}",
                {"op": "unlink", "path": op.path, "rel": op.rel, "href": op.href},
            )
        html = head_edit.remove_link(existing.html, op.rel, op.href)
        builder.insert(parse_record(op.path, html))
    elif isinstance(op, Label):
        existing = _held(builder, "label", op.path)
        if not is_well_formed_entity(op.entity):
            raise InvalidOp(f"malformed entity: {op.entity}", {"op": "label", "entity": op.entity})
        if op.entity in existing.entities:
            return
        builder.insert(parse_record(op.path, head_edit.add_entity(existing.html, op.entity)))
    elif isinstance(op, Unlabel):
        existing = _held(builder, "unlabel", op.path)
        if op.entity not in existing.entities:
            raise InvalidOp(
                f"unlabel op names an entity {op.path} does not carry: {op.entity}",
                {"op": "unlabel", "path": op.path, "entity": op.entity},
            )
        html = head_edit.remove_entity(existing.html, op.entity)
        builder.insert(parse_record(op.path, html))
    elif isinstance(op, Move):
        existing = _held(builder, "move", op.path)
        if existing.archived:
            raise InvalidOp(
                f"move op names a path the view does not hold live: {op.path}",
                {"op": "move", "path": op.path},
            )
        record = parse_record(op.to, existing.html)
        builder.remove(op.path)
        builder.insert(record)
    else:  # pragma: no cover - the union is closed
        raise InvalidOp(f"unknown op {type(op).__name__}", {"op": type(op).__name__})


def with_overlay(view: HeadView | IndexedView, ops: Sequence[OverlayOp]) -> IndexedView:
    """``view`` with ``ops`` applied in order; raises on the first op that does not resolve."""
    base = indexes_of(view)
    if not ops:
        return IndexedView(base, view.sha)
    builder = IndexesBuilder(base)
    for op in ops:
        _apply(builder, op)
    return IndexedView(builder.freeze(), view.sha)
