"""The client reads typed answers and writes checked JSON (docs/design/daemon.md, "The client
reads typed answers"): a budget on the word ``Any`` outside the MCP bridge, so an untyped
printer or answer does not creep back, and the pieces that replaced it behaving as their
docstrings say.

Seen red: with ``headctl_output.py`` and ``headctl_memhtml.py`` back on ``Any`` and ``.get``
reads (the budget), and with ``_load_receipt`` returning any JSON document again (the receipt
test).
"""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import msgspec
import pytest
from headd_client import headctl_output as show
from headd_client.integrations.commands import _load_receipt

from headd.wire.answers import SearchAnswer, SearchCoverage

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "client" / "headd_client"
#: ``Any`` left where Python's typing cannot say more (argparse's keywords, an ASGI scope): five
#: names today, a little room for a door that needs one.
ANY_BUDGET = 10


def _any_outside_mcp() -> list[str]:
    found = []
    for path in sorted(CLIENT.rglob("*.py")):
        if "mcp" in path.relative_to(CLIENT).parts[:-1]:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{number}"] * len(re.findall(r"\bAny\b", line))
    return found


def test_the_client_outside_the_bridge_names_any_within_its_budget() -> None:
    found = _any_outside_mcp()
    assert len(found) <= ANY_BUDGET, "\n".join(found)


def _args(**values: object) -> argparse.Namespace:
    return argparse.Namespace(verbose=False, **values)


def test_a_typed_renderer_decodes_the_plain_answer_it_is_given() -> None:
    answer = {"sha": "a" * 40, "path": "areas/b.html", "chain": ["areas/a.html", "areas/b.html"]}
    out = io.StringIO()
    show.resolve(answer, _args(), out)
    assert out.getvalue() == "areas/a.html -> areas/b.html\n"


def test_an_answer_of_another_shape_is_refused_where_it_is_read() -> None:
    with pytest.raises(msgspec.ValidationError):
        show.resolve({"sha": None, "path": 3, "chain": []}, _args(), io.StringIO())


def test_search_shows_the_head_answer_and_the_index_plane_answer_alike() -> None:
    head = msgspec.to_builtins(
        SearchAnswer("b" * 40, [], ["lexical"], False, SearchCoverage(1.0), took_ms=1.5)
    )
    plane = {"sha": "b" * 40, "plane": "index", "hits": [], "arms": ["lexical"], "took_ms": 2}
    shown = []
    for answer in (head, plane):
        out = io.StringIO()
        show.search(answer, _args(), out)
        shown.append(out.getvalue())
    assert shown == [
        f"0 hits at {'b' * 12} (lexical, 1.5 ms)\n",
        f"0 hits at {'b' * 12} (lexical, 2 ms)\n",
    ]


def test_a_receipt_that_is_not_one_reads_as_none(tmp_path: Path) -> None:
    receipt = tmp_path / "claude-user.json"
    receipt.write_text('{"version": 1, "entries": "not a list"}\n', encoding="utf-8")
    assert _load_receipt(receipt) is None
    receipt.write_text("[1, 2]\n", encoding="utf-8")
    assert _load_receipt(receipt) is None
