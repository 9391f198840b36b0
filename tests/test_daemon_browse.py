"""The browsing methods over the real daemon: ``list``, ``census``, ``neighbors``, ``source`` and
``traces.links``, on a real store, over the real socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir
from support.stores import BASE_FILES, make_store

from headd.errors import InvalidParams, PathNotFound

POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
POOL = "resources/database/connection-pool-size-is-forty.html"


class Served:
    def __init__(self, store: Path, daemon: Daemon) -> None:
        self.store = store
        self.daemon = daemon

    def call(self, method: str, **params: Any) -> Any:
        with Client(self.daemon.socket_path, timeout=30) as client:
            return client.call(method, params)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = tmp_path_factory.mktemp("browse") / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock")
    yield Served(store, daemon.wait_ready())
    assert daemon.stop() == 0, daemon.log()


def test_list_pages_in_path_order_with_a_cursor(served: Served) -> None:
    first = served.call("list", limit=2)
    assert [f["path"] for f in first["files"]] == [
        "areas/inbox/deploys-run-through-the-release-train.html",
        POSTGRES,
    ]
    assert first["next_cursor"] == POSTGRES
    rest = served.call("list", cursor=first["next_cursor"])
    assert rest["next_cursor"] is None
    listed = [f["path"] for f in first["files"] + rest["files"]]
    parsed = sorted(p for p in BASE_FILES if "broken" not in p)
    assert listed == parsed
    row = first["files"][1]
    assert (row["gist"], row["para"], row["memory_type"]) == (
        "Postgres is the system of record for orders.",
        "areas",
        "semantic",
    )
    narrowed = served.call("list", types=["user_preference"], entity="person:dana")
    assert [f["path"] for f in narrowed["files"]] == ["areas/inbox/user-prefers-short-answers.html"]
    with pytest.raises(InvalidParams):
        served.call("list", limit=201)


def test_census_counts_and_sees_an_uncommitted_edit(served: Served) -> None:
    counted = served.call("census")
    assert counted["counts_by_type"] == {"semantic": 4, "user_preference": 1}
    assert (counted["archived_count"], counted["edges"], counted["dirty"]) == (0, 1, False)
    assert counted["vector_coverage_floor"] == 0.95
    target = served.store / POSTGRES
    original = target.read_bytes()
    target.write_bytes(original.replace(b"orders", b"refunds"))
    try:
        assert served.call("census")["dirty"] is True
    finally:
        target.write_bytes(original)
    assert served.call("census")["dirty"] is False


def test_neighbors_both_ways_and_a_missing_path(served: Served) -> None:
    from_pool = served.call("neighbors", path=POOL)
    assert [(n["path"], n["rel"], n["hop"]) for n in from_pool["nodes"]] == [
        (POSTGRES, "relates_to", 1)
    ]
    into_postgres = served.call("neighbors", path=POSTGRES, depth=2)
    assert [n["path"] for n in into_postgres["nodes"]] == [POOL]
    assert into_postgres["edges"] == 1
    with pytest.raises(PathNotFound):
        served.call("neighbors", path="areas/inbox/nothing-here.html")
    with pytest.raises(InvalidParams):
        served.call("neighbors", path=POOL, depth=3)


def test_source_is_the_file_text_in_git_and_in_a_session(served: Served) -> None:
    assert served.call("source", path=POOL)["html"] == BASE_FILES[POOL]
    assert served.call("source", path="areas/inbox/none.html")["html"] is None
    opened = served.call("session.open")["session"]
    try:
        op = {"op": "link", "path": POSTGRES, "rel": "supports", "href": "/" + POOL}
        served.call("session.apply", session=opened, ops=[op])
        pending = served.call("source", path=POSTGRES, session=opened)["html"]
        assert 'href="/' + POOL + '"' in pending
        assert served.call("source", path=POSTGRES)["html"] == BASE_FILES[POSTGRES]
    finally:
        served.call("session.close", session=opened)


def test_traces_links_reads_the_state_plane(served: Served) -> None:
    opened = served.call("session.open")["session"]
    op = {"op": "link", "path": POOL, "rel": "supports", "href": "/" + POSTGRES}
    served.call("session.apply", session=opened, ops=[op])
    landed = served.call("session.commit", session=opened, session_id="s-browse", turn="t1")
    served.call("session.close", session=opened)
    assert landed["outcome"] == "committed"
    links = served.call("traces.links", path=POOL)["links"]
    assert [(r["session_id"], r["link_kind"], r["turn_uuid"]) for r in links] == [
        ("s-browse", "wrote", "t1")
    ]
    assert served.call("traces.links", path=POSTGRES)["links"] == []


def test_state_usage_reads_a_memorys_row_through_the_typed_call(served: Served) -> None:
    from headd_client import calls

    assert served.call("state.usage", path=POSTGRES)["usage"] is None
    served.call("reinforce", paths=[POSTGRES], signal="positive")
    with Client(served.daemon.socket_path, timeout=30) as client:
        answer = client.run(calls.state_usage(POSTGRES))
    assert answer.path == POSTGRES
    assert answer.usage is not None
    assert answer.usage.reinforcement_count == 1
    assert answer.usage.last_reinforced_at
    with pytest.raises(InvalidParams):
        served.call("state.usage", path="../outside.html")


def test_census_right_after_a_commit_and_a_stopped_daemon_leave_git_status_clean(
    tmp_path: Path,
) -> None:
    """The daemon answers a commit with git's index entries owed (written once its commits
    pause): ``census`` writes them before it asks ``git status``, and a daemon stopped within
    the pause leaves the index written."""
    from support.git import git
    from support.memory import memory_html

    store = tmp_path / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock").wait_ready()
    served = Served(store, daemon)
    try:
        for k in range(2):
            sid = served.call("session.open")["session"]
            html = memory_html(f"Owed {k}", f"Owed fact {k} holds for the index.")
            served.call(
                "session.apply",
                session=sid,
                ops=[{"op": "put", "path": f"areas/owed-{k}.html", "html": html}],
            )
            assert served.call("session.commit", session=sid)["outcome"] == "committed"
            assert served.call("census")["dirty"] is False
            assert git(store, "status", "--porcelain") == ""
        sid = served.call("session.open")["session"]
        html = memory_html("Owed at stop", "The fact owed at stop holds.")
        served.call(
            "session.apply",
            session=sid,
            ops=[{"op": "put", "path": "areas/owed-stop.html", "html": html}],
        )
        assert served.call("session.commit", session=sid)["outcome"] == "committed"
    finally:
        assert daemon.stop() == 0, daemon.log()
    assert git(store, "status", "--porcelain") == ""
