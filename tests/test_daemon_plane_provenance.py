"""Session provenance on the commit path: the transcript session, prompt and turn go
into every written file's head and into the commit's trailers, and the content hash holds.

Mutation notes (each applied once, the named test seen red, then reverted):
- drop the ``stamp_provenance`` call in ``commit_session`` -> ``test_provenance_is_stamped…``.
- drop the ``remove_meta`` branch of ``stamp_provenance`` -> ``test_a_missing_prompt_clears…``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.git import file_at, git
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.memfile.head_edit import read_meta
from headd.memfile.parse import parse_memory
from headd.ops import Archive, Put
from headd.store.commit import Provenance, commit_message, stamp_provenance
from headd.store.manager import SessionManager

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
GAMMA = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)
PROV = Provenance(session_id="f7e32699-d45b-4248", prompt_id="pr_01JQ8ZK3", turn="t_7c1a")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


def test_commit_message_with_provenance_uses_memhtml_trailers() -> None:
    text = commit_message("add beta", "s1", 1, PROV)
    assert text == (
        "memhtml(session): add beta\n\n"
        "Memhtml-Session: f7e32699-d45b-4248\nMemhtml-Prompt: pr_01JQ8ZK3\n"
        "Memhtml-Turn: t_7c1a\nHeadd-Session: s1\n"
    )
    same = commit_message(None, "abc", 1, Provenance(session_id="abc"))
    assert same == "memhtml(session): 1 path\n\nMemhtml-Session: abc\n"
    forged = commit_message(None, "s", 1, Provenance(session_id="x\nForged: y", turn="t"))
    assert "Memhtml-Session: x Forged: y\nMemhtml-Turn: t\n" in forged


def test_provenance_is_stamped_into_each_written_head_and_trailers(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    applied = manager.apply(
        s,
        [
            Put(path="areas/inbox/beta.html", html=BETA),
            Put(path="areas/inbox/gamma.html", html=GAMMA),
        ],
    )
    assert applied.violations == ()
    result = manager.commit(s, "two letters", provenance=PROV)
    assert result.outcome == "committed" and result.sha is not None
    for path, original in (("areas/inbox/beta.html", BETA), ("areas/inbox/gamma.html", GAMMA)):
        html = file_at(store, result.sha, path)
        assert html is not None
        assert read_meta(html, "memhtml-session") == PROV.session_id
        assert read_meta(html, "memhtml-prompt") == PROV.prompt_id
        assert read_meta(html, "memhtml-turn") == PROV.turn
        record = parse_memory(path, html.encode())
        assert (record.session_id, record.prompt_id, record.turn_uuid) == (
            PROV.session_id,
            PROV.prompt_id,
            PROV.turn,
        )
        # A head splice: the body, hence the content hash, is the one that was judged.
        assert record.content_hash == parse_memory(path, original.encode()).content_hash
        # The checkout followed with the stamped bytes.
        assert (store / path).read_text() == html
    trailers = git(
        store,
        "log",
        "-1",
        "--format=%(trailers:key=Memhtml-Session,key=Memhtml-Prompt,key=Memhtml-Turn,"
        "key=Headd-Session)",
    )
    assert trailers.splitlines() == [
        f"Memhtml-Session: {PROV.session_id}",
        f"Memhtml-Prompt: {PROV.prompt_id}",
        f"Memhtml-Turn: {PROV.turn}",
        f"Headd-Session: {s}",
    ]
    assert git(store, "status", "--porcelain") == ""


def test_without_provenance_files_carry_none(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    result = manager.commit(s)
    assert result.sha is not None
    html = file_at(store, result.sha, "areas/inbox/beta.html")
    assert html == BETA and read_meta(html, "memhtml-session") is None


def test_a_missing_prompt_clears_an_older_one() -> None:
    older = stamp_provenance(BETA, PROV)
    newer = stamp_provenance(older, Provenance(session_id="other"))
    assert read_meta(newer, "memhtml-session") == "other"
    assert read_meta(newer, "memhtml-prompt") is None
    assert read_meta(newer, "memhtml-turn") is None
    assert stamp_provenance(newer, Provenance(session_id="other")) == newer


def test_an_archive_carries_the_provenance_of_the_session_that_moved_it(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    manager.commit(s)
    manager.apply(s, [Archive(path="areas/inbox/beta.html")])
    result = manager.commit(s, provenance=Provenance(session_id="archiver"))
    assert result.outcome == "committed" and result.paths
    archived = [p for p in result.paths if p.startswith("archive/")]
    assert len(archived) == 1
    html = file_at(store, result.sha or "", archived[0])
    assert html is not None and read_meta(html, "memhtml-session") == "archiver"


_ID = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda v: v.strip() == v and v.isprintable() and v != "")


@settings(max_examples=40, deadline=None)
@given(session=_ID, prompt=st.none() | _ID, turn=st.none() | _ID)
def test_stamping_round_trips_through_the_parser_and_keeps_the_hash(
    session: str, prompt: str | None, turn: str | None
) -> None:
    """Whatever the ids (quotes, ampersands, any script), the parsed record names exactly them,
    the content hash is the unstamped file's, and stamping twice changes nothing."""
    provenance = Provenance(session_id=session, prompt_id=prompt, turn=turn)
    stamped = stamp_provenance(BETA, provenance)
    record = parse_memory("areas/inbox/beta.html", stamped.encode())
    assert (record.session_id, record.prompt_id, record.turn_uuid) == (session, prompt, turn)
    original = parse_memory("areas/inbox/beta.html", BETA.encode())
    assert record.content_hash == original.content_hash
    assert stamp_provenance(stamped, provenance) == stamped
