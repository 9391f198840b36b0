"""Overlay ops: the pending writes of a session, as tagged msgspec Structs.

One definition serves the wire (``session.apply`` decodes a list of ``Op``), the overlay
(``headd.head.overlay`` matches on them) and the session log (encoded as JSON lines). The tag
field is ``op``, as on the wire (docs/protocol.md, "Overlay ops").
"""

from __future__ import annotations

import msgspec


class Put(msgspec.Struct, frozen=True, tag="put", tag_field="op", forbid_unknown_fields=True):
    """Parse ``html`` and insert it at ``path``, replacing what was there."""

    path: str
    html: str


class Archive(
    msgspec.Struct, frozen=True, tag="archive", tag_field="op", forbid_unknown_fields=True
):
    """Remove ``path`` and insert ``html`` at ``to`` as an archived record.

    ``to`` defaults to the archive path of ``path`` in the current year and ``html`` to the file
    with the three archive stamps; the daemon fills both before the op reaches the overlay.
    """

    path: str
    to: str | None = None
    html: str | None = None


class LinkOp(msgspec.Struct, frozen=True, tag="link", tag_field="op", forbid_unknown_fields=True):
    """Add ``<link rel="memhtml-REL" href="HREF">`` to the head of ``path``."""

    path: str
    rel: str
    href: str


class UnlinkOp(
    msgspec.Struct, frozen=True, tag="unlink", tag_field="op", forbid_unknown_fields=True
):
    path: str
    rel: str
    href: str


class Label(msgspec.Struct, frozen=True, tag="label", tag_field="op", forbid_unknown_fields=True):
    """Add a ``memhtml-entity`` meta (already normalized: ``type:name``)."""

    path: str
    entity: str


class Unlabel(
    msgspec.Struct, frozen=True, tag="unlabel", tag_field="op", forbid_unknown_fields=True
):
    path: str
    entity: str


class Retask(msgspec.Struct, frozen=True, tag="retask", tag_field="op", forbid_unknown_fields=True):
    """Set the ``memhtml-task-status`` meta of the task at ``path`` (and ``memhtml-updated`` to
    ``at``, when given) by a head splice: a task's status moves in place, as memhtml moves it,
    where a ``put`` over a live path is refused as a claim edit."""

    path: str
    status: str
    at: str | None = None


class Move(msgspec.Struct, frozen=True, tag="move", tag_field="op", forbid_unknown_fields=True):
    """Re-parse the current html of ``path`` at ``to``; the old path must be held, not archived."""

    path: str
    to: str


class Write(msgspec.Struct, frozen=True, tag="write", tag_field="op", forbid_unknown_fields=True):
    """Render a memory as memhtml's writer does, place it, then behave as ``put``.

    A convenience of the wire only: the daemon turns it into a ``Put`` before the overlay sees it.
    """

    title: str
    type: str
    claim: str
    body: str | list[str] | None = None
    tags: list[str] | None = None
    entities: list[str] | None = None
    workspace: str | None = None
    path: str | None = None
    importance: float | None = None
    confidence: float | None = None


#: What the overlay applies.
OverlayOp = Put | Archive | LinkOp | UnlinkOp | Label | Unlabel | Move | Retask
#: What a client may send.
Op = Put | Archive | LinkOp | UnlinkOp | Label | Unlabel | Move | Retask | Write

decode_ops = msgspec.json.Decoder(list[Op]).decode
