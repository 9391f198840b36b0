"""The parts of ``status`` that describe other subsystems, as msgspec Structs: the embedder's
state and the memory accounting (the remote's standing is in ``headd.wire.remote_answers``).

Each subsystem builds its own part (``headd.embed.factory``; ``headd.head.footprint`` with the
daemon), but the shape is the wire's: the wire sits below those subsystems and imports none of
them, so the Structs live here and ``docs/protocol.md`` describes them with the rest of the
answer. Field order is the order the keys always had; a key a part leaves out is ``UNSET``,
never ``null``.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

# -- the embedder ---------------------------------------------------------------------------


class EmbedderState(msgspec.Struct, frozen=True):
    """``status.embedder_state``: which model answers and where its load stands.

    ``state`` is ``off`` (no embedder: ``reason`` says why), ``idle`` (not loaded yet),
    ``loading``, ``converting`` (the local model's one-time int8 conversion), ``ready`` or
    ``failed`` (``error`` names why; searches answer degraded). An embedder that is off has no
    ``load_s`` or ``error``; one that is on has no ``reason``.
    """

    setting: str
    model: str | None
    state: str
    reason: str | UnsetType = UNSET
    load_s: float | None | UnsetType = UNSET
    error: str | None | UnsetType = UNSET


# -- the memory accounting ------------------------------------------------------------------


class RecordsFootprint(msgspec.Struct, frozen=True):
    """One version's records: how many, their text's characters, their bodies' deflated bytes,
    and their structs' bytes (one struct's size times the count)."""

    count: int
    text_chars: int
    body_deflated_bytes: int
    struct_bytes: int


class PostingsFootprint(msgspec.Struct, frozen=True):
    """One version's lexical postings: buckets (one per token), entries, and bytes."""

    buckets: int
    entries: int
    bytes: int


class VectorsFootprint(msgspec.Struct, frozen=True):
    """The vector cache's entries, and the bytes of its arrays and the version's matrix."""

    entries: int
    bytes: int


class PlaneFiles(msgspec.Struct, frozen=True):
    """The SQLite plane's files on disk; a file that cannot be read (or is absent) is left out."""

    index_db_bytes: int | UnsetType = UNSET
    wal_bytes: int | UnsetType = UNSET


class MemoryFigures(msgspec.Struct, frozen=True):
    """``status.memory``: the process's resident and peak bytes (null off Linux), and with
    ``memory: true`` the whole accounting. ``records`` and ``postings`` are null while a
    snapshot's maps are still to be built (asking builds nothing)."""

    rss_bytes: int | None
    peak_bytes: int | None
    records: RecordsFootprint | None | UnsetType = UNSET
    postings: PostingsFootprint | None | UnsetType = UNSET
    vectors: VectorsFootprint | UnsetType = UNSET
    plane: PlaneFiles | UnsetType = UNSET
