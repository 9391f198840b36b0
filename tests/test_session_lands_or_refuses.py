"""A session commit lands every op it was given or refuses naming the op: never ``committed``
having landed nothing. Through a real daemon over its socket, as an agent's client talks to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from headd_client import Client
from support.daemon import Daemon, short_socket_dir
from support.git import git
from support.stores import make_store

POOL = "resources/database/connection-pool-size-is-forty.html"
REWRITE = {"op": "write", "title": "Pool", "type": "semantic", "claim": "The pool is fifty."}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[Path, Client]]:
    (root := tmp_path / "store").mkdir()
    make_store(root)
    daemon = Daemon(root, short_socket_dir() / "h.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        with Client(str(daemon.socket_path)).connect() as connected:
            yield root, connected
    finally:
        daemon.stop()


def test_archive_then_write_at_the_same_path_lands_both(client: tuple[Path, Client]) -> None:
    """The archive frees the path; the new claim may take it in the same session."""
    store, c = client
    session = c.call("session.open", {})["session"]
    applied = c.call(
        "session.apply",
        {"session": session, "ops": [{"op": "archive", "path": POOL}, {**REWRITE, "path": POOL}]},
    )
    assert applied["violations"] == [], applied
    done = c.call("session.commit", {"session": session, "message": "replace"})
    assert done["outcome"] == "committed" and done["sha"] == git(store, "rev-parse", "main")
    assert POOL in done["paths"] and any(p.startswith("archive/") for p in done["paths"])
    assert "fifty" in git(store, "show", f"main:{POOL}")


def test_a_commit_after_a_refused_apply_refuses_naming_the_op(
    client: tuple[Path, Client],
) -> None:
    store, c = client
    before = git(store, "rev-parse", "main")
    session = c.call("session.open", {})["session"]
    refused = c.call(
        "session.apply",
        {"session": session, "ops": [{"op": "archive", "path": "areas/inbox/none.html"}]},
    )
    assert refused["violations"]
    done = c.call("session.commit", {"session": session, "message": "nothing"})
    assert done["outcome"] == "refused", done
    assert [v["op"] for v in done["violations"]] == [0]
    assert git(store, "rev-parse", "main") == before
