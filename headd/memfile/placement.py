"""Where a new memory goes: memhtml's slug, placement rules and collision suffixes.

A path is a memory's id (there is no uuid), so the rules that pick it must be memhtml's exactly:
a file we place lands where the tool would have put it, and a later ``write`` of the same title
by either tool finds the same collision ladder. Verified against every path the tool chose in
the anchor corpus's ``build-log.jsonl``.

Everything here is pure: "taken" is a set the caller builds (the head's paths plus the paths a
batch has already claimed), and "now" is passed in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Set
from datetime import UTC, datetime
from typing import Protocol

from headd.errors import InvalidMemory, StorageFailure, WriteConflict
from headd.paths import normalize_path, para_of

#: Longest slug, before the ``.html`` and outside an episodic date prefix.
SLUG_MAX_LENGTH = 80
#: The stem of a title with nothing sluggable in it.
SLUG_FALLBACK = "untitled"
#: How many collision ordinals are tried before giving up (memhtml's bound).
MAX_COLLISION_ORDINAL = 1000

ARCS_DIR = "areas/arcs"
PEOPLE_DIR = "resources/people"
INBOX_DIR = "areas/inbox"
TASKS_SUBDIR = "tasks"
MEMORY_EXTENSION = ".html"

#: Types that go to a topic directory under ``resources/`` when they carry a tag.
_RESOURCE_TYPES = frozenset({"semantic", "procedural", "precedent"})

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """Kebab-case ``[a-z0-9-]``: NFKD, combining marks (Mn) removed, lowercase, every run outside
    ``a-z0-9`` one hyphen, trimmed, cut to 80 and re-trimmed; empty gives ``untitled``."""
    folded = "".join(
        ch for ch in unicodedata.normalize("NFKD", title) if unicodedata.category(ch) != "Mn"
    )
    kebab = _NON_SLUG.sub("-", folded.lower()).strip("-")
    if kebab == "":
        return SLUG_FALLBACK
    if len(kebab) <= SLUG_MAX_LENGTH:
        return kebab
    return kebab[:SLUG_MAX_LENGTH].rstrip("-") or SLUG_FALLBACK


def with_collision_ordinal(slug: str, ordinal: int) -> str:
    """``slug`` for ordinal 1, else ``slug-N`` shortened so the whole stays within 80 chars."""
    if ordinal <= 1:
        return slug
    suffix = f"-{ordinal}"
    room = SLUG_MAX_LENGTH - len(suffix)
    stem = slug if len(slug) <= room else slug[:room].rstrip("-")
    return f"{stem or SLUG_FALLBACK}{suffix}"


def date_prefix(now: datetime) -> str:
    """``YYYYMMDD`` of ``now`` in UTC: an episodic file name's prefix."""
    if now.tzinfo is None:
        raise ValueError("now must carry a timezone")
    utc = now.astimezone(UTC)
    return f"{utc.year:04d}{utc.month:02d}{utc.day:02d}"


def file_name(slug: str, *, episodic: bool, now: datetime) -> str:
    """``YYYYMMDD-slug.html`` for an episodic memory, ``slug.html`` otherwise."""
    return f"{date_prefix(now)}-{slug}.html" if episodic else f"{slug}.html"


def unusable_reason(path: str) -> str | None:
    """Why ``path`` is not a usable memory path (None when it is): it must sit in a bucket, end
    in ``.html`` and have no ``.``, ``..`` or empty segment."""
    normalized = normalize_path(path)
    if para_of(normalized) is None:
        return (
            f"path `{path}` is not a usable memory path: it is not rooted in a PARA bucket "
            "(projects, areas, resources, archive)"
        )
    if not normalized.endswith(MEMORY_EXTENSION):
        return f"path `{path}` is not a usable memory path: it does not end in .html"
    if any(segment in ("", ".", "..") for segment in normalized.split("/")):
        return f"path `{path}` is not a usable memory path: it has a `.`, `..` or empty segment"
    return None


def is_valid_memory_path(path: str) -> bool:
    """True when ``path`` is usable as a memory path (see :func:`unusable_reason`)."""
    return unusable_reason(path) is None


def _names_person(entity: str) -> bool:
    """A ``person:<name>`` entity with a non-blank name (``person:`` alone routes nowhere)."""
    return entity.startswith("person:") and entity[len("person:") :].strip() != ""


def placement_dir(
    memory_type: str,
    *,
    entities: Iterable[str] = (),
    tags: Iterable[str] = (),
    workspace: str | None = None,
) -> str:
    """The directory memhtml's rules give a memory with no usable explicit path, in order:
    arc → ``areas/arcs``; task → ``projects/<slug(ws)>/tasks`` or ``areas/inbox/tasks``;
    semantic naming a ``person:<name>`` → ``resources/people``; workspace → ``projects/<slug(ws)>``;
    semantic/procedural/precedent with a tag → ``resources/<slug(first non-blank tag)>``;
    else ``areas/inbox``."""
    has_workspace = workspace is not None and workspace != ""
    if memory_type == "arc":
        return ARCS_DIR
    if memory_type == "task":
        if has_workspace:
            return f"projects/{slugify(workspace or '')}/{TASKS_SUBDIR}"
        return f"{INBOX_DIR}/{TASKS_SUBDIR}"
    if memory_type == "semantic" and any(_names_person(e) for e in entities):
        return PEOPLE_DIR
    if has_workspace:
        return f"projects/{slugify(workspace or '')}"
    if memory_type in _RESOURCE_TYPES:
        primary = next((tag for tag in tags if tag.strip() != ""), None)
        if primary is not None:
            return f"resources/{slugify(primary)}"
    return INBOX_DIR


def choose_path(
    *,
    title: str,
    memory_type: str,
    taken: Set[str],
    now: datetime,
    entities: Iterable[str] = (),
    tags: Iterable[str] = (),
    workspace: str | None = None,
    path: str | None = None,
    strict_path: bool = False,
) -> str:
    """The path a ``write`` lands at.

    A usable explicit ``path`` is used as is (normalized); when ``taken`` holds it the write is
    refused with :class:`WriteConflict` (no suffix: the caller named it). An unusable one is
    ignored, or refused with :class:`InvalidMemory` under ``strict_path``. Otherwise the
    placement directory plus the title's slug, date-prefixed for an episodic memory, with the
    first free ``-2``, ``-3``, … suffix kept inside the 80-character slug budget.
    """
    if path is not None:
        reason = unusable_reason(path)
        if reason is None:
            normalized = normalize_path(path)
            if normalized in taken:
                raise WriteConflict(
                    f"write conflict on {normalized}: the path is occupied",
                    {"path": normalized},
                )
            return normalized
        if strict_path:
            raise InvalidMemory(path, [reason + ". Nothing was written"])
    directory = placement_dir(memory_type, entities=entities, tags=tags, workspace=workspace)
    base = slugify(title)
    episodic = memory_type == "episodic"
    for ordinal in range(1, MAX_COLLISION_ORDINAL + 1):
        name = file_name(with_collision_ordinal(base, ordinal), episodic=episodic, now=now)
        candidate = f"{directory}/{name}"
        if candidate not in taken:
            return candidate
    raise StorageFailure(
        "no free path for the title after 1000 collision suffixes",
        {"operation": "write.pathExhausted", "directory": directory},
    )


class Placeable(Protocol):
    """What placement reads from a memory's fields (``render.MemoryFields`` is one)."""

    @property
    def title(self) -> str: ...
    @property
    def memory_type(self) -> str: ...
    @property
    def entities(self) -> tuple[str, ...]: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def workspace(self) -> str | None: ...


def place(
    fields: Placeable,
    taken: Set[str],
    now: datetime,
    *,
    path: str | None = None,
    strict_path: bool = False,
) -> str:
    """:func:`choose_path` for a fields value (e.g. ``render.MemoryFields``)."""
    return choose_path(
        title=fields.title,
        memory_type=fields.memory_type,
        taken=taken,
        now=now,
        entities=fields.entities,
        tags=fields.tags,
        workspace=fields.workspace,
        path=path,
        strict_path=strict_path,
    )
