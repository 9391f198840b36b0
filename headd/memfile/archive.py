"""Archive paths and the head stamps of eviction and supersession.

Nothing deletes a committed memory: eviction is a move to ``archive/<YYYY>/<original path>`` (the
UTC year of the operation) plus three head stamps, and a correction also records who superseded
the old file and until when it held. The path map mirrors the whole original path, so it is
injective and :func:`original_path` (which strips exactly one ``archive/<YYYY>/``) is its left
inverse even for a memory archived twice. A path archived again in the same year (corrected
twice) goes to ``archive/<YYYY>/<N>/<original path>``, N = 2, 3, …: never over the first copy,
and since an original path starts with its bucket, ``<N>/`` is never part of one.

The stamps are byte splices through :mod:`headd.memfile.head_edit`, never a re-serialization, so
the article (and with it the content hash) cannot move.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from headd.errors import InvalidOp
from headd.memfile.head_edit import add_link, read_meta, set_meta
from headd.memfile.render import format_instant
from headd.paths import normalize_path, origin_path_of

ARCHIVE_BUCKET = "archive"
_ARCHIVE_PREFIX = re.compile(r"^archive/(\d{4,})/(.+)$", re.DOTALL)


def _checked(path: str) -> str:
    """``path`` normalized, refused when it has a ``.``, ``..`` or empty segment."""
    normalized = normalize_path(path)
    if normalized == "" or any(seg in ("", ".", "..") for seg in normalized.split("/")):
        raise InvalidOp(
            "archive path refused: a `.`, `..` or empty segment", {"path": path, "rule": "segments"}
        )
    return normalized


def year_segment(year: int) -> str:
    """A calendar year as the four-digit partition segment (``0999``, ``2026``)."""
    if year < 0:
        raise InvalidOp("archive year refused: negative", {"year": year})
    return f"{year:04d}"


#: How many archived copies of one path one year may hold (a bound on the search for a slot).
MAX_ARCHIVED_COPIES = 1000


def archive_path(path: str, year: int, taken: Callable[[str], bool] | None = None) -> str:
    """``archive/<YYYY>/<path>``, the original path mirrored exactly beneath the year; when
    ``taken`` says that is held (the path archived before in that year), the first free
    ``archive/<YYYY>/<N>/<path>``, N = 2, 3, …, so every archived version stays at the tip."""
    base = f"{ARCHIVE_BUCKET}/{year_segment(year)}"
    first = f"{base}/{_checked(path)}"
    if taken is None or not taken(first):
        return first
    for n in range(2, MAX_ARCHIVED_COPIES + 1):
        candidate = f"{base}/{n}/{_checked(path)}"
        if not taken(candidate):
            return candidate
    raise InvalidOp(
        f"archive: {MAX_ARCHIVED_COPIES} copies of {path} archived this year already",
        {"path": path, "rule": "archive-copies"},
    )


def original_path(path: str) -> str | None:
    """The path behind an archive path (exactly one ``archive/<YYYY>/`` stripped), or None when
    ``path`` is not one."""
    return origin_path_of(_checked(path))


def is_archive_path(path: str) -> bool:
    """True when ``path`` sits under ``archive/<YYYY>/`` (so the file is archived, whatever its
    status meta says)."""
    return original_path(path) is not None


def archive_year_of(path: str) -> int | None:
    """The partition year of an archive path, or None."""
    match = _ARCHIVE_PREFIX.match(_checked(path))
    return int(match.group(1)) if match else None


def href_of(path: str) -> str:
    """The root-relative ``href`` form of a stored path."""
    return "/" + normalize_path(path)


def archive_stamps(html: str, now: datetime) -> str:
    """The three eviction stamps: ``memhtml-status`` → ``archived``, ``memhtml-updated`` and
    ``memhtml-archived`` → now (set in place, or inserted at the template position)."""
    at = format_instant(now)
    html = set_meta(html, "memhtml-status", "archived")
    html = set_meta(html, "memhtml-updated", at)
    return set_meta(html, "memhtml-archived", at)


def valid_until_for(old_html: str, winner_valid_from: str) -> str | None:
    """The old file's new ``memhtml-valid-until``, min-wins: None (keep what is there) when it
    already states an earlier, non-empty bound; ISO strings compare as strings by design."""
    existing = read_meta(old_html, "memhtml-valid-until")
    if existing is not None and existing != "" and existing < winner_valid_from:
        return None
    return winner_valid_from


def supersede_moment(new_html: str, event_at: str | None, now: datetime) -> str:
    """When the superseding fact starts to hold: its explicit ``memhtml-valid-from``, else its
    event time (the first ``<time datetime>``, which the caller's parse knows), else now."""
    explicit = read_meta(new_html, "memhtml-valid-from")
    if explicit is not None:
        return explicit
    return event_at if event_at is not None else format_instant(now)


def supersede_stamps(old_html: str, *, new_path: str, moment: str, now: datetime) -> str:
    """Stamp a superseded file (a correction or a last-wins consolidation): the three archive
    stamps, ``memhtml-superseded-by`` → ``/new_path``, and ``memhtml-valid-until`` → ``moment``
    (the new file's valid-from) unless an earlier bound already stands — in memhtml's order."""
    until = valid_until_for(old_html, moment)
    html = archive_stamps(old_html, now)
    html = set_meta(html, "memhtml-superseded-by", href_of(new_path))
    if until is not None:
        html = set_meta(html, "memhtml-valid-until", until)
    return html


def superseding_stamps(new_html: str, *, old_archive_path: str, moment: str) -> str:
    """Stamp the file that supersedes: ``<link rel="memhtml-supersedes" href="/archive/…">`` and
    ``memhtml-valid-from`` → ``moment`` unless the file states one already."""
    html = add_link(new_html, "supersedes", href_of(old_archive_path))
    if read_meta(html, "memhtml-valid-from") is None:
        html = set_meta(html, "memhtml-valid-from", moment)
    return html
