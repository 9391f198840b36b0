"""The view a commit was judged on is the landed commit's version, when the commit wrote exactly
what was judged (``commit.as_judged``): the daemon's follower takes it instead of advancing, so
it must equal, index for index, the version an advance from the base builds from git.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``as_judged`` answering True always -> ``test_a_spliced_link_or_stamp_is_no_landed_view``.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from support.memory import memory_html
from support.stores import SEED_FILES, WRITTEN, TickingClock, make_store

from headd.head.version import advance_head, load_head
from headd.ops import Archive, Label, LinkOp, Move, Op, Put
from headd.store.commit import Provenance
from headd.store.manager import SessionManager

BETA = memory_html("Beta", "Beta is the second letter of the Greek alphabet.", **WRITTEN)
GAMMA = memory_html("Gamma", "Gamma is the third letter of the Greek alphabet.", **WRITTEN)
RIVAL = memory_html("Capital, revised", "The capital of India is Mumbai.", **WRITTEN)

BATCHES: dict[str, list[Op]] = {
    "put": [Put(path="areas/inbox/beta.html", html=BETA)],
    "two puts and an archive": [
        Put(path="areas/inbox/beta.html", html=BETA),
        Put(path="resources/greek/gamma.html", html=GAMMA),
        Archive(path="areas/inbox/capital.html"),
    ],
    "archive": [Archive(path="areas/inbox/alpha.html")],
    "splices and a move": [
        LinkOp(path="areas/inbox/alpha.html", rel="relates_to", href="/areas/inbox/capital.html"),
        Label(path="areas/inbox/capital.html", entity="place:india"),
        Move(path="areas/inbox/capital.html", to="resources/geo/capital.html"),
    ],
}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    make_store(store, SEED_FILES, ignore=None)
    return store


@pytest.mark.parametrize("name", BATCHES)
def test_the_landed_view_is_the_advanced_version(store: Path, name: str) -> None:
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    base = manager.info(s).base
    assert manager.apply(s, BATCHES[name]).violations == ()
    result = manager.commit(s, name)
    assert result.outcome == "committed" and result.sha is not None
    landed = manager.take_landed(result.sha)
    assert landed is not None and landed.sha == base
    repo = pygit2.Repository(str(store))
    advanced = advance_head(repo, load_head(repo, base), result.sha)
    assert dict(landed.indexes.records) == dict(advanced.indexes.records)  # type: ignore[attr-defined]
    assert landed.indexes == advanced.indexes  # type: ignore[attr-defined]
    assert manager.take_landed(result.sha) is None  # taken once


def test_a_spliced_link_or_stamp_is_no_landed_view(store: Path) -> None:
    """A ``contradicts`` link or a provenance stamp changes the written bytes after the
    judgement: the judged view is not the commit's version, and none is offered."""
    manager = SessionManager(store, clock=TickingClock())
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/capital-2.html", html=RIVAL)])
    result = manager.commit(s, "rival")
    assert result.contradictions and result.sha is not None
    assert manager.take_landed(result.sha) is None
    s = manager.open().session
    manager.apply(s, [Put(path="areas/inbox/beta.html", html=BETA)])
    result = manager.commit(s, "stamped", provenance=Provenance(session_id="transcript-1"))
    assert result.outcome == "committed" and result.sha is not None
    assert manager.take_landed(result.sha) is None
