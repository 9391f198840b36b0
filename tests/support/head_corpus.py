"""The head tests' generated corpus: a port of memhtml's ``packages/head/tests/helpers.ts``.

``memory_for(i)`` is deterministic in ``i`` and varies path, type, entities, tags, links and time
the way memhtml's generator does, so the search golden captured from memhtml's own head
(``tests/fixtures/head/search-two-arm.golden.json``) can be reproduced over the same 120 files.
The file text is memhtml's writer template (``support.memory``): the claim's ``<p>`` with the
first body paragraph joined on, or the given article markup for every fourth file (which carries
a ``<time>``).

Also here: a scaffolded store holding such a corpus (``make_corpus``) and a plain-dict view
(``MapView``) standing in for a caller's own view.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from headd.record import MemoryRecord
from support.memory import memory_html
from support.stores import Store

BROKEN_HTML = (
    "<!doctype html>\n<html><head><title>x</title></head><body><p>no article</p></body></html>\n"
)

#: memhtml's scaffold puts a README.html at the root that is memory-shaped but not a memory.
SCAFFOLD: dict[str, str] = {
    "README.html": "<!doctype html>\n<html><head><title>memhtml store</title></head>"
    "<body><h1>memhtml</h1><p>This directory is a memory store.</p></body></html>\n",
    "areas/.gitkeep": "",
    "projects/.gitkeep": "",
    "resources/.gitkeep": "",
    "archive/.gitkeep": "",
}


@dataclass(frozen=True)
class GeneratedFile:
    path: str
    html: str


def memory_path_for(index: int) -> str:
    if index % 10 == 9:
        bucket = "archive/2025/areas/inbox"
    elif index % 3 == 0:
        bucket = "projects/alpha"
    else:
        bucket = "areas/inbox"
    return f"{bucket}/fact-{index}.html"


def memory_for(index: int) -> GeneratedFile:
    """One generated memory, as memhtml's ``memoryFor(index)``."""
    month = f"{index % 12 + 1:02d}"
    day = f"{index % 27 + 1:02d}"
    at = f"2026-{month}-{day}T12:00:00Z"
    claim = f"The capital of Country{index} is City{index}."
    body = f"Region {index % 5} grows crop{index % 7} and trades through port{index % 11}."
    links = (("relates_to", f"/{memory_path_for(index - 1)}"),) if index > 0 else ()
    article_html = None
    body_paragraphs: tuple[str, ...] = (body,)
    if index % 4 == 0:
        article_html = (
            f"<p><mark>{claim}</mark> {body} Recorded "
            f'<time datetime="2025-{month}-{day}">that day</time>.</p>'
        )
        body_paragraphs = ()
    html = memory_html(
        f"Fact {index} about Country{index}",
        claim,
        created=at,
        content_hash=True,
        memory_type="episodic" if index % 4 == 0 else "semantic",
        body=body_paragraphs,
        article=article_html,
        entities=(f"place:country{index}", f"topic:crop{index % 7}"),
        tags=(f"region-{index % 5}",),
        links=links,
    )
    return GeneratedFile(memory_path_for(index), html)


def make_corpus(
    root: Path, count: int, extra: Iterable[tuple[str, str | None]] = ()
) -> tuple[Store, str, list[GeneratedFile]]:
    """A scaffolded repo holding ``count`` generated memories in one commit."""
    repo = Store(root, add_all=True)
    repo.commit(SCAFFOLD.items(), "scaffold")
    files = [memory_for(index) for index in range(count)]
    sha = repo.commit([*((f.path, f.html) for f in files), *extra], f"corpus of {count}")
    return repo, sha, files


# ----------------------------------------------------------------------------------------------
# A caller's own view


class MapView:
    """A view over a plain dict, the shape a foreign caller could hand to search or overlay."""

    def __init__(self, records: Iterable[MemoryRecord], sha: str | None = None) -> None:
        self._records: dict[str, MemoryRecord] = {}
        for record in records:
            self._records[record.path] = record
        self.sha = sha

    @property
    def size(self) -> int:
        return len(self._records)

    def record(self, path: str) -> MemoryRecord | None:
        return self._records.get(path)

    def records(self) -> Iterator[MemoryRecord]:
        return iter(self._records.values())

    def paths(self) -> Iterator[str]:
        return iter(self._records)


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """(result, elapsed seconds)."""
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - started
