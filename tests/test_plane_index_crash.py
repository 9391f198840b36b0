"""kill -9 inside a rebuild or an update: the next call uses the index or refuses IndexStale.

A real subprocess runs the operation with a hook that SIGKILLs its own process at a named
point; the test then opens the same files and checks the outcome against a fresh rebuild.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pygit2
import pytest
from headd_plane.plane import open_plane
from support.memory import memory_html
from support.plane import rows
from support.stores import Store

from headd.errors import IndexStale

NOW = "2026-11-30T10:00:00.000Z"

RUNNER = textwrap.dedent(
    """
    import os, signal, sys
    from headd_plane import indexer
    from headd_plane.plane import open_plane

    store, operation, point, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    indexer.WRITE_BATCH_SIZE = 20
    seen = {"n": 0}

    def hook(name):
        if name == point:
            seen["n"] += 1
            if seen["n"] == nth:
                os.kill(os.getpid(), signal.SIGKILL)

    plane = open_plane(store, now=lambda: "2026-11-30T10:00:00.000Z", hook=hook)
    getattr(plane, operation)()
    sys.exit(3)  # the kill point was never reached
    """
)


def _files(version: int) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in range(12):
        out[f"areas/bulk/m{n:02d}.html"] = memory_html(
            f"Memory {n} v{version}",
            f"Claim {n} version {version} about the ledger.",
            tags=[f"t{n % 3}", "bulk"],
            entities=[f"service:s{n}"],
            links=[("relates_to", f"/areas/bulk/m{(n + 1) % 12:02d}.html")],
        )
    return out


@pytest.fixture
def store_at_second_commit(tmp_path: Path) -> tuple[Store, Path]:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit(_files(1))
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    plane.close()
    second = _files(2)
    second["areas/bulk/m11.html"] = None
    store.commit(second)
    store.move("areas/bulk/m00.html", "archive/2026/areas/bulk/m00.html")
    store.commit()
    fresh = tmp_path / "fresh"
    pygit2.clone_repository(str(store.root), str(fresh))
    reference = open_plane(fresh, now=lambda: NOW)
    reference.rebuild()
    return store, fresh


@pytest.mark.parametrize(
    ("operation", "point", "nth", "stale"),
    [
        ("rebuild", "rebuild.truncated", 1, False),
        ("rebuild", "rebuild.batch", 2, False),
        ("rebuild", "rebuild.projected", 1, False),
        ("rebuild", "rebuild.committed", 1, True),
        ("update", "update.batch", 1, False),
        ("update", "update.recorded", 1, False),
    ],
)
def test_kill_9_never_leaves_a_wrong_index(
    store_at_second_commit: tuple[Store, Path], operation: str, point: str, nth: int, stale: bool
) -> None:
    store, fresh = store_at_second_commit
    killed = subprocess.run(
        [sys.executable, "-c", RUNNER, str(store.root), operation, point, str(nth)],
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    plane = open_plane(store.root, now=lambda: NOW)
    if stale:
        assert plane.status().stale
        with pytest.raises(IndexStale):
            plane.update()
        plane.rebuild()
    else:
        plane.update()
    expected = rows(open_plane(fresh, now=lambda: NOW).db.conn)
    assert rows(plane.db.conn) == expected
    assert plane.status().head_sha == str(store.repo.head.target)
