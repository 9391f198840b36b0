"""The secret rules on their own: every shape of the corpus named by its kind, ordinary memory
text and the anchor corpus passing, and a finding's place exact wherever the credential sits.

Mutation notes (each applied once, the named test seen red, then reverted):
- drop the ``_password_like`` check of ``password-assignment`` -> ``test_ordinary_text_passes``.
- report ``match.start()`` instead of ``match.start("value")`` -> ``test_a_finding_points_at_the_value``.
- the gate's shortest value 16 instead of 15 -> ``test_the_gate_never_hides_a_value`` (a
  15-character Slack token).
- ``redact`` keeps the text before the last value only -> ``test_redact_keeps_the_text``.
- the stripe rule's needles ``("_live_x",)`` -> ``test_every_match_holds_its_rules_needle``.
- U+017F left out of the fold -> ``test_a_folded_needle_is_found_through_a_lookalike`` (the gate
  in front of the patterns had the same hole: ``str.lower`` keeps U+017F).
- the password rule's needle ``password`` instead of ``pass``, or ``credential`` left out of the
  generic key rule's -> ``test_each_keyword_spelling_runs_its_rule``.
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


def _ungated(text: str) -> list[tuple[int, int, str]]:
    """Every rule's matches as if no rule had needles (what the needles must never change)."""
    out = []
    for rule in rules.RULES:
        for match in rule.pattern.finditer(text):
            value = match.group("value")
            if rule.accept is None or rule.accept(value):
                out.append((match.start("value"), match.end("value"), rule.kind))
    return out


def _holds_a_needle(rule: rules.Rule, text: str) -> bool:
    haystack = rules.fold(text) if rule.folded else text
    return any(needle in haystack for needle in rule.needles)


@pytest.mark.parametrize(
    ("kind", "text"), SECRETS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SECRETS)]
)
def test_every_match_holds_its_rules_needle(kind: str, text: str) -> None:
    """Each rule's needles are in every text it matches, down to the shortest such text."""
    for candidate in (text, _shortest(text)):
        for rule in rules.RULES:
            for match in rule.pattern.finditer(candidate):
                assert _holds_a_needle(rule, match.group(0)), (rule.kind, match.group(0))


#: What Python's case-insensitive matching takes for an ASCII letter, beside the letter's case.
_LOOKALIKES = {"i": "\u0130\u0131I", "s": "\u017fS", "k": "\u212aK"}


@st.composite
def _disguised(draw: st.DrawFn) -> str:
    """A credential of the corpus with letters swapped for what ``(?i:...)`` still matches them
    as, between ordinary words."""
    _, text = SECRETS[draw(st.integers(0, len(SECRETS) - 1))]
    chars = list(text)
    for i, char in enumerate(chars):
        if char.lower() in _LOOKALIKES and draw(st.booleans()):
            chars[i] = draw(st.sampled_from(_LOOKALIKES[char.lower()] + char.swapcase()))
        elif char.isalpha() and draw(st.integers(0, 7)) == 0:
            chars[i] = char.swapcase()
    return draw(_WORDS) + " " + "".join(chars) + " " + draw(_WORDS)


@given(text=_disguised())
def test_the_needles_never_hide_a_match(text: str) -> None:
    assert sorted(rules._hits(text)) == sorted(_ungated(text))


def test_a_folded_needle_is_found_through_a_lookalike() -> None:
    """``ſecret`` (U+017F) is matched by ``(?i:secret)``, so its rule must run."""
    text = "the \u017fecret: Zq8vLm3nXw2 for the bot"
    assert [f.kind for f in scan(text)] == ["secret-assignment"]
    assert sorted(rules._hits(text)) == sorted(_ungated(text))


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("password-assignment", "passwd: Zx9y8w7v"),
        ("password-assignment", "passphrase = 'h0rse-battery'"),
        ("password-assignment", "DB_PASSWORD=Zx9y8w7v"),
        ("connection-string-password", "Server=db;Pwd=Zx9y8w7v;"),
        ("secret-assignment", "client_secret: Zq8vLm3nXw2"),
        ("secret-assignment", "API-SECRET = Zq8vLm3nXw2"),
        ("bearer-token", "Authorization: Bearer Zq8vLm3nXw2kP7rT5yU1iO9"),
        ("azure-storage-key", "SharedAccessKey=" + "Zq8vLm3nXw2kP7rT5yU1iO9aB4cD6eF0gH2jK4lM6n="),
    ]
    + [
        ("high-entropy-key", f"{word}: Zq8vLm3nXw2kP7rT5yU1iO9")
        for word in (
            "api-key",
            "APIKEY",
            "access_key",
            "auth-key",
            "Token",
            "CREDENTIAL",
            "private_key",
            "signing-key",
            "session_key",
        )
    ],
)
def test_each_keyword_spelling_runs_its_rule(kind: str, text: str) -> None:
    """Every spelling a keyword rule's pattern allows holds the rule's needle (folded)."""
    assert [f.kind for f in scan(text)] == [kind]
