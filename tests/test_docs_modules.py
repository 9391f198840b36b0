"""Every module of the daemon, the head, the store and the wire is named in its area's page, and
every module a page's module table lists exists.

A newcomer reads the area page to find where a thing lives; a module the page does not name is
one they cannot find, and a row for a deleted module sends them looking for nothing.

Seen red: with the ``snapshot_store.py`` row taken out of docs/design/daemon.md, and with a row
for a ``git_refs.py`` that no longer exists put back.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Package directory, and the page that names its modules.
AREAS = {
    "headd/daemon": "docs/design/daemon.md",
    "headd/wire": "docs/design/daemon.md",
    "headd/head": "docs/design/head.md",
    "headd/store": "docs/design/store.md",
}

ROW = re.compile(r"^\| `([a-z_]+\.py)`(?:, `([a-z_]+\.py)`)? \|", re.M)


def modules_of(package: str) -> list[str]:
    return sorted(p.name for p in (ROOT / package).glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("package", sorted(AREAS))
def test_every_module_is_named_in_its_area_page(package: str) -> None:
    page = (ROOT / AREAS[package]).read_text(encoding="utf-8")
    missing = [m for m in modules_of(package) if not re.search(rf"[`/]{re.escape(m)}`", page)]
    assert missing == [], f"{AREAS[package]} does not name {missing}"


@pytest.mark.parametrize("page", sorted(set(AREAS.values())))
def test_every_module_row_names_a_module_that_exists(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    known = {m for package, doc in AREAS.items() if doc == page for m in modules_of(package)}
    listed = {name for row in ROW.findall(text) for name in row if name}
    assert listed, f"{page} has no module table"
    assert listed - known == set(), f"{page} lists modules that do not exist"
