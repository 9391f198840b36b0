"""docs/protocol.md against the code it documents, and the docs' links against the repository.

The page's generated blocks must be exactly what ``scripts/gen_protocol.py`` writes from the
method Structs, the error tree, the ops and the argparse trees today; the hand-written result
table must name every method the daemon serves and no other; every relative link in the README
and under docs/ must name a file of the repository, and none may point outside it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from headd.wire.methods import METHODS

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "protocol.md"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_protocol", REPO / "scripts" / "gen_protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_blocks_are_what_the_code_says_today() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert generator().render(page) == page, "run: .venv/bin/python scripts/gen_protocol.py"


def test_a_changed_method_makes_the_page_disagree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check bites: a new method (or a removed block) is a difference, not a pass."""
    import msgspec

    from headd.wire import methods

    class Frobnicate(msgspec.Struct, forbid_unknown_fields=True):
        how: str

    monkeypatch.setitem(methods.METHODS, "frobnicate", Frobnicate)
    page = PAGE.read_text(encoding="utf-8")
    assert generator().render(page) != page
    cut = re.sub(r"<!-- generated: ops -->.*?<!-- end generated: ops -->", "", page, flags=re.S)
    with pytest.raises(KeyError, match="ops"):
        generator().render(cut)


def test_every_method_has_its_result_described_and_no_other() -> None:
    page = PAGE.read_text(encoding="utf-8")
    section = page.split("What each method answers:", 1)[1].split("A **record**", 1)[0]
    described: set[str] = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            described |= set(re.findall(r"`([a-z_.]+)`", row.split("|")[1]))
    assert described == set(METHODS)


def test_every_method_has_an_answer_type_and_no_other() -> None:
    """The answer tables are generated from this mapping, so a method missing from it would be
    a method whose answer the page cannot describe."""
    from headd.wire.answers import answer_types

    assert list(answer_types()) == list(METHODS)


def test_every_headctl_command_and_headd_option_is_on_the_page() -> None:
    from headd_client.headctl import COMMANDS, build_parser

    build_parser()
    page = PAGE.read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"#### `headctl {command.name}`" in page


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_docs_link_only_to_files_in_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert "contract.md" not in text, "the wire is docs/protocol.md"
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(REPO), f"{doc.name} links outside the repository: {target}"
        assert path.exists(), f"{doc.name} links to a missing file: {target}"
