"""The console's pure parts: the sanitizer (a property over hostile fragments) and the git history
readers over a real repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from headd_client.console.sanitize import safe_body
from hypothesis import given
from hypothesis import strategies as st
from support.memory import memory_html
from support.stores import Store

from headd.store import history

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=http://attacker.invalid/x.js></SCRIPT>",
    '<img src="http://attacker.invalid/p.png">',
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">a</a>',
    '<a href="JaVaScRiPt:alert(1)">a</a>',
    '<a href="java&#x09;script:alert(1)">a</a>',
    '<a href="data:text/html,<script>alert(1)</script>">a</a>',
    '<iframe src="http://attacker.invalid/"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<meta http-equiv="refresh" content="0;url=http://attacker.invalid/">',
    '<object data="http://attacker.invalid/x"></object>',
    '<embed src="http://attacker.invalid/x">',
    '<base href="http://attacker.invalid/">',
    '<link rel="stylesheet" href="http://attacker.invalid/x.css">',
    '<style>@import "http://attacker.invalid/x.css";</style>',
    '<svg onload="alert(1)"><image href="http://attacker.invalid/i.png"/></svg>',
    '<form action="http://attacker.invalid/"><input name="x"><button>go</button></form>',
    '<p style="background:url(http://attacker.invalid/x)">s</p>',
    '<video src="http://attacker.invalid/v.mp4" autoplay></video>',
    '<audio src="http://attacker.invalid/a.mp3" autoplay></audio>',
    '<details open ontoggle="alert(1)"><summary>s</summary></details>',
    "<p><mark>The claim stays.</mark> Some <em>prose</em>.</p>",
    '<a href="/areas/inbox/x.html">a memory</a>',
    '<a href="https://example.org/page">a page</a>',
]

FORBIDDEN = re.compile(
    r"<\s*(script|iframe|img|object|embed|base|link|style|meta|svg|form|input|video|audio)\b"
    r"|\son[a-z]+\s*=|javascript:|data:|http-equiv|\ssrc\s*=|\sstyle\s*=|\saction\s*=",
    re.IGNORECASE,
)


@given(st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=8), st.text(max_size=20))
def test_nothing_that_runs_or_loads_survives(fragments: list[str], text: str) -> None:
    html = f"<html><head><title>t</title></head><body><article>{text.join(fragments)}"
    cleaned = safe_body(html + "</article></body></html>")
    assert not FORBIDDEN.search(cleaned), cleaned


def test_prose_marks_and_links_survive() -> None:
    cleaned = safe_body(
        "<html><body><article><p><mark>The claim stays.</mark> Some <em>prose</em>."
        ' <a href="/areas/inbox/x.html">m</a> <a href="https://example.org/">w</a>'
        ' <a href="/not-a-bucket/x.html">n</a></p></article></body></html>'
    )
    assert "<mark>The claim stays.</mark>" in cleaned and "<em>prose</em>" in cleaned
    assert 'href="/memory?path=areas/inbox/x.html"' in cleaned
    assert 'href="https://example.org/"' in cleaned and "noopener" in cleaned
    assert "not-a-bucket" not in cleaned  # a site-relative link outside the store goes nowhere


def test_a_file_without_a_body_shows_nothing() -> None:
    assert safe_body("") == ""


PATH = "areas/inbox/a.html"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


def test_file_history_lists_the_commits_that_changed_the_file(store: Store) -> None:
    first = store.commit({PATH: memory_html("A", "One.")}, "memhtml(session): first")
    store.commit({"areas/inbox/b.html": memory_html("B", "Other.")}, "unrelated")
    third = store.commit(
        {PATH: memory_html("A", "Two.")},
        "memhtml(session): memhtml(correct): A\n\nMemhtml-Session: s-1\n",
    )
    repo = history.open_repo(store.root)
    versions = history.file_history(repo, history.commit_of(repo, third), PATH)
    assert [v.commit.sha for v in versions] == [third, first]
    assert versions[0].commit.kind == "correct" and versions[0].commit.session == "s-1"
    assert versions[1].commit.kind == "write"
    assert "-<p><mark>One.</mark></p>" in versions[0].diff
    assert "+<p><mark>Two.</mark></p>" in versions[0].diff
    assert versions[1].diff.startswith("--- /dev/null")


def test_a_sleep_phase_commit_is_of_kind_sleep_and_keeps_its_phase(store: Store) -> None:
    sha = store.commit({PATH: memory_html("A", "One.")}, "sleep(placement-triage): moved 4")
    repo = history.open_repo(store.root)
    described = history.describe(history.commit_of(repo, sha))
    assert described.kind == "sleep"
    assert described.subject == "sleep(placement-triage): moved 4"


def test_activity_groups_by_day_and_session(store: Store) -> None:
    store.commit({PATH: memory_html("A", "One.")}, "memhtml(session): a\n\nMemhtml-Session: s-1\n")
    tip = store.commit(
        {"areas/inbox/b.html": memory_html("B", "Two.")},
        "memhtml(session): memhtml(archive): b\n\nMemhtml-Session: s-2\n",
    )
    repo = history.open_repo(store.root)
    days = history.activity(history.commit_of(repo, tip))
    assert len(days) == 1
    assert days[0].counts == {"write": 1, "archive": 1}
    assert [g.session for g in days[0].sessions] == ["s-2", "s-1"]


def test_a_revision_the_store_lacks_is_a_bad_revision(store: Store) -> None:
    store.commit({PATH: memory_html("A", "One.")}, "first")
    repo = history.open_repo(store.root)
    with pytest.raises(history.BadRevision):
        history.commit_of(repo, "0" * 40)
    assert history.is_revision("abcd") and not history.is_revision("HEAD~1")
