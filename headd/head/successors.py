"""Where a memory lives now: follow an archive move, then ``supersedes`` links forward.

``resolve`` answers the contract's ``resolve`` method over any view (a version or a session's
overlay): a path the view no longer holds is looked for as an archived copy
(``archive/<YYYY>/<path>`` whose ``origin_path`` is that path, the newest when there are several);
from there, each step goes to a memory that names the current one (or the path it was archived
from) with ``rel="supersedes"``, live successors before archived ones, until none is left, a
cycle closes or :data:`MAX_STEPS` steps were taken. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from headd.errors import PathNotFound
from headd.head.indexes import IndexedView

#: The longest supersedes chain ``resolve`` follows (a bound, so a damaged store cannot hang it).
MAX_STEPS = 64


@dataclass(frozen=True, slots=True)
class Resolution:
    """The live memory ``path`` leads to, and every path on the way (``path`` first)."""

    path: str
    chain: tuple[str, ...]


def resolve(view: IndexedView, path: str) -> Resolution:
    """The live memory ``path`` leads to in ``view``; PathNotFound when it leads nowhere."""
    path = path.lstrip("/")
    chain = [path]
    current = path
    if view.record(current) is None:
        moved = archived_copy(view, current)
        if moved is None:
            raise PathNotFound(f"no memory at {path}", {"path": path})
        current = moved
        chain.append(current)
    for _ in range(MAX_STEPS):
        following = successor(view, current)
        if following is None or following in chain:
            break
        current = following
        chain.append(current)
    return Resolution(current, tuple(chain))


def archived_copy(view: IndexedView, path: str) -> str | None:
    """The newest archived record whose ``origin_path`` is ``path`` (a scan: resolve is rare)."""
    candidates = [r.path for r in view.records() if r.archived and r.origin_path == path]
    return max(candidates) if candidates else None


def successor(view: IndexedView, path: str) -> str | None:
    """The memory that supersedes ``path`` (by its own href or its archive origin's), live ones
    first, then by path; None when nothing does."""
    record = view.record(path)
    hrefs = {"/" + path}
    if record is not None and record.origin_path:
        hrefs.add("/" + record.origin_path)
    found: list[tuple[bool, str]] = []
    for href in hrefs:
        for linker in view.inbound(href):
            other = view.record(linker)
            if other is None:
                continue
            if any(link.rel == "supersedes" and link.href in hrefs for link in other.links):
                found.append((other.archived, linker))
    if not found:
        return None
    return min(found)[1]
