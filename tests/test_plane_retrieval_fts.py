"""The FTS query sanitizer: whatever an agent types, the MATCH statement never fails."""

from __future__ import annotations

import sqlite3

import pytest
from headd_plane.fts_query import fts_query_forms, has_fts_terms, sanitize_fts_query
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("query", "expected_any", "expected_all"),
    [
        ("oscar wants talk", "oscar OR wants OR talk", "oscar AND wants AND talk"),
        ("don't", "don OR t", "don AND t"),
        ("service:checkout-api", "service OR checkout OR api", "service AND checkout AND api"),
        (
            'find "drain the vip" fast',
            'find OR "drain the vip" OR fast',
            'find AND "drain the vip" AND fast',
        ),
        ('"unbalanced quote', "unbalanced OR quote", "unbalanced AND quote"),
        ("AND", "and", "and"),
        ('"OR"', '"or"', '"or"'),
        ("Déployé x²", "déployé OR x²", "déployé AND x²"),
        ("!!! ???", "", ""),
        ("", "", ""),
    ],
)
def test_sanitized_forms(query: str, expected_any: str, expected_all: str) -> None:
    forms = fts_query_forms(query)
    assert (forms.any, forms.all) == (expected_any, expected_all)
    assert sanitize_fts_query(query) == expected_any
    assert has_fts_terms(query) == (expected_any != "")


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.executemany(
        "INSERT INTO t (x) VALUES (?)",
        [("Don't roll back the checkout-api deploy",), ("déployé and OR not",), ("x² ünïcode",)],
    )
    return conn


@settings(max_examples=150, deadline=None)
@given(
    st.text(max_size=40)
    | st.lists(
        st.sampled_from(
            ['"', "'", ":", "-", "AND", "OR", "NOT", "(", "*", "^", " ", "a", "é", "NEAR"]
        ),
        max_size=12,
    ).map("".join)
)
def test_any_text_gives_a_match_the_driver_accepts(fts: sqlite3.Connection, query: str) -> None:
    forms = fts_query_forms(query)
    for match in (forms.all, forms.any, sanitize_fts_query(forms.any)):
        if match == "":
            continue
        fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone()
