"""An untracked symbolic link in the work tree is never read through: not by the plane's index,
not by ``headctl check``. A link may point anywhere; the outside file's text must not appear.

Mutation notes (each applied once, the named test seen red, then reverted):
- the ``worktree_symlink`` skip in ``GitSource.dirty`` removed -> ``test_the_plane_…``.
- ``_symlink_on`` in ``headd.memfile.check`` answering None -> ``test_headctl_check_…``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from headd_plane.plane import open_plane
from support.memory import memory_html
from support.stores import Store

from headd.memfile.check import main as check_main

NOW = "2026-11-30T10:00:00.000Z"
SECRET = memory_html("Outside secret", "The outside secret is hunter2.", body="Never indexed.")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.html"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    return secret


def test_the_plane_never_indexes_an_untracked_link_through_its_target(
    tmp_path: Path, outside: Path
) -> None:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit({"areas/inbox/a.html": memory_html("Kept", "A kept memory stays indexed.")})
    plane = open_plane(store.root, now=lambda: NOW)
    plane.rebuild()
    (store.root / "resources").mkdir()
    os.symlink(outside, store.root / "resources/x.html")
    os.symlink(outside.parent, store.root / "projects")
    plane.update()
    paths = [r[0] for r in plane.db.conn.execute("SELECT path FROM files ORDER BY path")]
    assert paths == ["areas/inbox/a.html"]
    found = plane.db.conn.execute(
        "SELECT count(*) FROM files WHERE title LIKE '%secret%' OR path LIKE '%secret%'"
    ).fetchone()
    assert tuple(found) == (0,)
    rebuilt = open_plane(store.root, now=lambda: NOW)
    rebuilt.rebuild()
    assert [r[0] for r in rebuilt.db.conn.execute("SELECT path FROM files")] == paths


def test_headctl_check_does_not_follow_a_link(
    tmp_path: Path, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(tmp_path / "store", ignore=".memhtml/\n", add_all=True)
    store.commit({"areas/inbox/a.html": memory_html("Kept", "A kept memory stays indexed.")})
    link = store.root / "resources/x.html"
    link.parent.mkdir()
    os.symlink(outside, link)
    os.symlink(outside.parent, store.root / "projects")
    code = check_main(
        ["--json", "--root", str(store.root), str(link), str(store.root / "projects/secret.html")]
    )
    out, _ = capsys.readouterr()
    results = json.loads(out)
    assert code == 1
    assert [r["record"] for r in results] == [None, None]
    assert all("symbolic link; not followed" in r["violations"][0] for r in results)
    assert "hunter2" not in out
