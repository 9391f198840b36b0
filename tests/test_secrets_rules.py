"""The secret rules on their own: every shape of the corpus named by its kind, ordinary memory
text and the anchor corpus passing, and a finding's place exact wherever the credential sits.

Mutation notes (each applied once, the named test seen red, then reverted):
- drop the ``_password_like`` check of ``password-assignment`` -> ``test_ordinary_text_passes``.
- report ``match.start()`` instead of ``match.start("value")`` -> ``test_a_finding_points_at_the_value``.
- the gate's shortest value 16 instead of 15 -> ``test_the_gate_never_hides_a_value`` (a
  15-character Slack token).
- ``redact`` keeps the text before the last value only -> ``test_redact_keeps_the_text``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.data import clone_anchor
from support.secret_corpus import ORDINARY, SECRETS

from headd.secrets import rules
from headd.secrets.rules import entropy, is_placeholder, redact, scan


@pytest.mark.parametrize(
    ("kind", "text"), SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)]
)
def test_every_shape_is_named_by_its_kind(kind: str, text: str) -> None:
    assert [f.kind for f in scan(text)] == [kind]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_passes(text: str) -> None:
    assert scan(text) == []


def test_the_anchor_corpus_passes(tmp_path: Path) -> None:
    """Every file memhtml itself wrote in the anchor corpus: no false refusal."""
    store = clone_anchor(tmp_path / "anchor")
    files = list(store.rglob("*.html"))
    assert len(files) > 100
    flagged = [p.name for p in files if scan(p.read_text(encoding="utf-8"))]
    assert flagged == []


def test_placeholders_and_entropy() -> None:
    assert is_placeholder("<password>") and is_placeholder("${API_KEY}") and is_placeholder("***")
    assert not is_placeholder("hunter22x")
    assert entropy("aaaaaaaa") == 0.0 and entropy("abcd") == 2.0


def test_a_finding_points_at_the_value() -> None:
    text = "Notes\n  the login is password: hunter22x, then\nDATABASE_URL=postgres://a:Zx9y8w@db/x"
    found = scan(text)
    assert [(f.kind, f.line, f.column) for f in found] == [
        ("password-assignment", 2, 26),
        ("connection-string-password", 3, 27),
    ]
    lines = text.split("\n")
    assert lines[1][25:].startswith("hunter22x") and lines[2][26:].startswith("Zx9y8w")


_WORDS = st.text(alphabet="abcdefghij klmnop\n", max_size=80)


@given(before=_WORDS, index=st.integers(0, len(SECRETS) - 1))
def test_place_is_exact(before: str, index: int) -> None:
    """Wherever a credential sits after ordinary text, the finding's line and column point at
    its first character."""
    kind, text = SECRETS[index]
    alone = scan(text)[0]
    combined = before + "\n" + text
    found = scan(combined)
    assert [f.kind for f in found] == [kind]
    lines = combined.split("\n")
    offset_line = before.count("\n") + 1
    assert found[0].line == alone.line + offset_line
    assert found[0].column == alone.column
    assert lines[found[0].line - 1][found[0].column - 1 :].startswith(
        text.split("\n")[alone.line - 1][alone.column - 1 :][:8]
    )


def _matches(text: str) -> bool:
    return any(True for _ in rules._hits(text))


def _shortest(text: str) -> str:
    """``text`` cut from the left, then from the right, while some pattern still matches it."""
    while len(text) > 1 and _matches(text[1:]):
        text = text[1:]
    while len(text) > 1 and _matches(text[:-1]):
        text = text[:-1]
    return text


@pytest.mark.parametrize(
    ("kind", "text"), SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)]
)
def test_the_gate_never_hides_a_value(kind: str, text: str) -> None:
    """The shortest text each credential of the corpus still matches as, alone or between
    spaces: the cheap gate in front of the patterns is open for it."""
    shortest = _shortest(text)
    assert rules.may_hold(shortest) and rules.may_hold(f" {shortest} ")


@pytest.mark.parametrize(
    ("kind", "text"), SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)]
)
def test_redact_replaces_the_value_by_its_kind(kind: str, text: str) -> None:
    found = scan(text)[0]
    redacted = redact(f"before {text} after")
    assert f"[redacted:{kind}]" in redacted and scan(redacted) == []
    line = text.split("\n")[found.line - 1]
    assert line[found.column - 1 :][:12] not in redacted
    assert redacted.startswith("before ") and redacted.endswith(" after")


def test_redact_keeps_the_text() -> None:
    text = "db: password: hunter22x, and the key AKIAIOSFODNN7ABCDEFG here"
    assert redact(text) == (
        "db: password: [redacted:password-assignment], and the key [redacted:aws-access-key-id] here"
    )
    for ordinary in ORDINARY:
        assert redact(ordinary) == ordinary
