"""What the store needs from the head core and the file writer, named in one place.

The commit path reads versions through ``View`` (the head core's read surface) and folds ops with
``with_overlay``; it never reaches into how a version is built. The functions here import the
other areas lazily, so this package imports (and its pure parts test) on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, cast

from headd.ops import OverlayOp
from headd.record import MemoryRecord


class View(Protocol):
    """A version of the corpus, or a session's overlay on one (``headd.head``)."""

    @property
    def sha(self) -> str | None: ...

    def record(self, path: str) -> MemoryRecord | None: ...

    def by_content_hash(self, content_hash: str) -> str | None: ...

    def by_frame_key(self, key: str) -> Sequence[str]: ...

    @property
    def pending_texts(self) -> Mapping[str, str]:
        """Blob id -> file text of the records an overlay parsed and git does not hold yet."""
        ...


Overlay = Callable[[View, Sequence[OverlayOp]], View]

#: The text of a blob by its id (``git_io.blob_text`` bound to a repository).
ReadBlob = Callable[[str], str]


class VersionSource(Protocol):
    """Gives the view of any commit; the daemon passes the one that follows its branch."""

    def version(self, sha: str) -> View: ...


def with_overlay(view: View, ops: Sequence[OverlayOp], read_blob: ReadBlob | None = None) -> View:
    from headd.head.overlay import with_overlay as overlay

    result: View = overlay(cast(Any, view), list(ops), read_blob)
    return result


def record_text(view: View, record: MemoryRecord, read_blob: ReadBlob) -> str:
    """A record's file text: the view's own when an overlay parsed it, else its blob."""
    from headd.head.texts import record_text as text_of

    return text_of(view.pending_texts, record, read_blob)


def parse_memory(path: str, html: str) -> MemoryRecord:
    from headd.memfile.parse import parse_memory as parse

    return parse(path, html)


def add_link(html: str, rel: str, href: str) -> str:
    """Add a head link by byte splice (the content hash survives)."""
    from headd.memfile import head_edit

    result: str = head_edit.add_link(html, rel, href)
    return result


def is_memory_path(path: str) -> bool:
    """Whether a version reads the file at ``path`` as a memory (``headd.head.version``)."""
    from headd.head.version import is_candidate_path

    return is_candidate_path(path)
