"""A fetch's objects wait in a quarantine until every check passed, then join the store.

``fetch.fsckObjects`` refuses a pack that holds an object ``git fsck`` refuses, but git runs some
checks (a ``.gitmodules`` that is not a blob) only once the pack is written and indexed, and it
leaves that pack in the object store when they fail: ``git fsck --strict`` then fails forever.
So the fetch writes into a directory of its own (``GIT_OBJECT_DIRECTORY``, with the store's
objects as an alternate to read from, which is how ``git receive-pack`` quarantines a push), and
only a fetch that succeeded has its objects moved into the store; a refused one is deleted
whole. A pack joins by its ``.pack`` first and its ``.idx`` last, so git never sees half a pack;
a crash in between leaves at most a pack git ignores, never a missing object.

The fetch writes no ref either (only ``FETCH_HEAD``; ``--refmap=`` turns off git's update of the
configured tracking ref): the tracking ref moves after the objects joined, so no ref ever names
an object the store does not hold, not even while a fetch is under way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

#: The order a pack's files join in: the index, which makes git use the pack, last.
_PACK_ORDER = (".pack", ".rev", ".bitmap", ".idx")


def env_for(quarantine: Path, objects: Path) -> dict[str, str]:
    """The environment that makes git write objects into ``quarantine`` and read the store's."""
    return {
        "GIT_OBJECT_DIRECTORY": str(quarantine),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects),
    }


#: Prefix of a quarantine directory's name inside the object directory.
PREFIX = "headd-incoming-"

#: Age in seconds past which a quarantine no round can still be using is removed: one a
#: ``kill -9`` left behind (rounds last at most their deadline, a minute by default).
STALE_AFTER = 3600.0


def sweep(objects: Path, *, now: float | None = None) -> int:
    """Remove the stale quarantines in ``objects``; return how many."""
    now = time.time() if now is None else now
    removed = 0
    for path in objects.glob(PREFIX + "*"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > STALE_AFTER:
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
    if removed:
        log.info("removed %d quarantine(s) a stopped fetch left in %s", removed, objects)
    return removed


@contextlib.contextmanager
def quarantine(objects: Path) -> Iterator[Path]:
    """A fresh quarantine directory inside ``objects`` (same file system, so joining is a
    rename), removed with whatever is left in it when the block ends; stale ones go first."""
    sweep(objects)
    path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=objects))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def join(quarantine_dir: Path, objects: Path) -> int:
    """Move every object of ``quarantine_dir`` into ``objects``; return the files moved."""
    moved = 0
    packs = quarantine_dir / "pack"
    if packs.is_dir():
        (objects / "pack").mkdir(exist_ok=True)
        names = sorted(
            os.listdir(packs),
            key=lambda n: _PACK_ORDER.index(Path(n).suffix) if Path(n).suffix in _PACK_ORDER else 0,
        )
        for name in names:
            if Path(name).suffix in _PACK_ORDER and not name.startswith("tmp_"):
                moved += _move(packs / name, objects / "pack" / name)
    for fanout in os.listdir(quarantine_dir):
        if len(fanout) == 2 and (quarantine_dir / fanout).is_dir():
            (objects / fanout).mkdir(exist_ok=True)
            for name in os.listdir(quarantine_dir / fanout):
                moved += _move(quarantine_dir / fanout / name, objects / fanout / name)
    return moved


def _move(source: Path, target: Path) -> int:
    if target.exists():
        return 0  # the store has it already (objects are named by their content)
    os.replace(source, target)
    return 1
