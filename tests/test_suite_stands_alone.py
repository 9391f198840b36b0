"""The test suite needs nothing outside the repository, and its modules stand apart.

A fresh clone on any machine runs ``./run-tests``: no test, fixture, support module, shipped data
file or script of the test command names a path of one particular machine or a directory beside
the checkout. Helpers live in ``tests/support/``; a test module never imports another one (nor
``conftest``), so each reads on its own and moving one never breaks another.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support.data import DATA, REPO, TESTS

#: Strings that name data outside the repository: a machine's absolute paths and the shared
#: directory beside a checkout (split so this file does not name them itself).
OUTSIDE = ("/" + "work/", "/" + "tmp/", ".." + "/shared", "shared" + "/data", "shared" + "/spec")

#: The test command and what it runs besides pytest.
COMMAND = [REPO / "run-tests", REPO / ".ci" / "run", *sorted((REPO / "scripts").glob("*.sh"))]


def text_files() -> list[Path]:
    """Every text file the suite reads or runs: tests/ (shipped data included) and the command."""
    out = []
    for path in [*sorted(TESTS.rglob("*")), *COMMAND]:
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        data = path.read_bytes()
        if b"\0" in data or path.suffix == ".bundle":
            continue  # SQLite files and git bundles hold no paths we wrote
        out.append(path)
    return out


def offending_lines(path: Path, root: Path = REPO) -> list[str]:
    """``file:line: text`` for each line of ``path`` that names a path outside the repository."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [
        f"{path.relative_to(root)}:{n}: {line.strip()[:100]}"
        for n, line in enumerate(lines, 1)
        if any(needle in line for needle in OUTSIDE)
    ]


def test_no_test_file_or_script_names_a_path_outside_the_repository() -> None:
    files = text_files()
    assert any(p.suffix == ".py" for p in files) and any(DATA in p.parents for p in files)
    found = [hit for path in files for hit in offending_lines(path)]
    assert found == []


def test_the_scan_sees_a_path_outside_the_repository(tmp_path: Path) -> None:
    planted = tmp_path / "test_x.py"
    planted.write_text(f'DATA = "{OUTSIDE[2]}/data"\nOK = "shared"\n', encoding="utf-8")
    assert offending_lines(planted, tmp_path) == [f'test_x.py:1: DATA = "{OUTSIDE[2]}/data"']


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports, at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_the_top_of_tests_holds_only_test_modules_and_conftest() -> None:
    helpers = [
        p.name
        for p in TESTS.glob("*.py")
        if p.name != "conftest.py" and not p.name.startswith("test_")
    ]
    assert helpers == [], "helpers belong in tests/support/"


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    test_modules = {p.stem for p in TESTS.glob("*.py")}  # test_* and conftest
    assert {"conftest", "test_suite_stands_alone"} <= test_modules
    imports = {str(path.relative_to(TESTS)): imported_modules(path) for path in TESTS.rglob("*.py")}
    offenders = {name: sorted(found & test_modules) for name, found in imports.items()}
    offenders = {name: found for name, found in offenders.items() if found}
    assert offenders == {}


def test_the_import_check_sees_a_test_module_imported(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text(
        "import json\ndef f():\n    from test_store_commit import BETA\n    import conftest\n"
    )
    assert imported_modules(planted) == {"json", "test_store_commit", "conftest"}
