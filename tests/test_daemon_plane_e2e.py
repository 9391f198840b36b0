"""The SQLite plane through a real daemon subprocess: recall, reinforce, index.*, search on the
index plane, traces.*, state export/import, the background update and session provenance.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``follower.on_advance`` without ``plane.schedule_update`` ->
  ``test_background_update_follows_an_external_commit``.
- ``_record_wrote`` returning at once -> ``test_a_session_commit_with_provenance…``.
- ``indexed_sha`` never raising -> ``test_stale_index_and_model_mismatch_are_typed_errors``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir, wait_for
from support.git import external_commit
from support.memory import memory_html
from support.stores import make_store
from support.transcripts import write_transcript

from headd.errors import (
    EmbedModelMismatch,
    IndexStale,
    InvalidParams,
    SessionNotFound,
)
from headd.wire.plane_answers import (
    IndexSearchAnswer,
    RecallAnswer,
    TracesSearchAnswer,
)

POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
POOL = "resources/database/connection-pool-size-is-forty.html"
INDEX_ARMS = {"fts", "vector", "recency", "salience"}


class Served:
    def __init__(self, store: Path, seed: str, daemon: Daemon, trace_root: Path) -> None:
        self.store = store
        self.seed = seed
        self.daemon = daemon
        self.trace_root = trace_root

    def call(self, method: str, **params: Any) -> Any:
        with Client(self.daemon.socket_path, timeout=60) as c:
            return c.call(method, params)

    def wait_indexed(self, sha: str, timeout: float = 30.0) -> None:
        ok = wait_for(lambda: self.call("status")["index"]["indexed_sha"] == sha, timeout, 0.05)
        assert ok, self.daemon.log()[-3000:]


def serve(tmp: Path, extra: tuple[str, ...] = ()) -> Served:
    store = tmp / "store"
    seed = make_store(store)
    traces = tmp / "claude"
    traces.mkdir()
    daemon = Daemon(
        store, short_socket_dir() / "head.sock", extra=["--trace-root", str(traces), *extra]
    ).wait_ready()
    return Served(store, seed, daemon, traces)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = serve(tmp_path_factory.mktemp("plane-e2e"))
    try:
        s.wait_indexed(s.seed)
        yield s
    finally:
        s.daemon.stop()


def test_status_names_the_plane_files_and_the_background_update(served: Served) -> None:
    status = served.call("status")
    headd_dir = served.store / ".memhtml" / "headd"
    assert status["index_path"] == str(headd_dir / "index.db")
    assert status["state_path"] == str(headd_dir / "state.db")
    assert Path(status["index_path"]).is_file() and Path(status["state_path"]).is_file()
    index = status["index"]
    assert index["updates"] >= 1 and index["indexed_sha"] == served.seed
    assert index["last_error"] is None
    # memhtml's own files are never written.
    assert not (served.store / ".memhtml" / "index.db").exists()


def test_index_status_and_update(served: Served) -> None:
    status = served.call("index.status")
    assert status["indexed"] is True and status["stale"] is False
    assert status["head_sha"] == served.seed
    assert status["files"] == 5  # the broken file is skipped
    assert status["index_path"] == served.call("status")["index_path"]
    update = served.call("index.update")
    assert update["mode"] == "update" and update["unchanged"] is True
    with pytest.raises(InvalidParams):
        served.call("index.update", embed="yes")
    with pytest.raises(InvalidParams):
        served.call("index.status", verbose=True)


def test_search_on_the_index_plane(served: Served) -> None:
    answer = served.call("search", query="postgres system of record", plane="index", limit=3)
    assert answer["plane"] == "index" and answer["sha"] == served.seed
    assert answer["hits"][0]["path"] == POSTGRES
    assert len(answer["hits"]) <= 3
    assert set(answer["arms"]) <= INDEX_ARMS and "fts" in answer["arms"]
    for hit in answer["hits"]:
        assert set(hit["arms"]) <= INDEX_ARMS
        assert {"path", "score", "title", "claim"} <= set(hit)
    scoped = served.call(
        "search", query="postgres", plane="index", filter={"types": ["user_preference"]}
    )
    assert all(h["path"] == "areas/inbox/user-prefers-short-answers.html" for h in scoped["hits"])
    with pytest.raises(InvalidParams):
        served.call("search", query="x", plane="index", at=served.seed)
    with pytest.raises(InvalidParams):
        served.call("search", query="x", plane="index", now="yesterday")


def test_recall_is_the_disclosure_pack(served: Served) -> None:
    pack = served.call("recall", query="connection pool size")
    assert {"entries", "index_lines", "spent", "truncated"} <= set(pack)
    assert pack["entries"][0]["path"] == POOL
    small = served.call("recall", query="connection pool size", budget_chars=60)
    assert small["spent"] <= 60 and small["spent"] < pack["spent"]
    with pytest.raises(InvalidParams):
        served.call("recall", query="x", budget_chars=0)
    with pytest.raises(InvalidParams):
        served.call("recall")


def test_recall_keeps_to_its_filter(served: Served) -> None:
    """The filter narrows the head's ranked pool as well as the plane's own arms: a memory the
    filter leaves out is in no entry, though it is the query's best match unfiltered."""
    prefs = "areas/inbox/user-prefers-short-answers.html"
    scoped = served.call(
        "recall", query="connection pool size", filter={"types": ["user_preference"]}
    )
    paths = [entry["path"] for entry in scoped["entries"]]
    assert POOL not in paths and set(paths) <= {prefs}


def test_reinforce_bumps_once_per_cooldown_and_exports(served: Served) -> None:
    first = served.call("reinforce", paths=[POOL, "/" + POSTGRES], signal="positive")
    assert first == {"bumped": [POOL, POSTGRES], "cooled_down": []}
    again = served.call("reinforce", paths=[POOL])
    assert again == {"bumped": [], "cooled_down": [POOL]}
    with pytest.raises(InvalidParams):
        served.call("reinforce", paths=[POOL], signal="great")
    exported = served.call("state.export")
    assert exported["written"] is True and exported["rows"] == 2
    sidecar = served.store / exported["path"]
    rows = sidecar.read_text().splitlines()
    assert [r.split('"')[3] for r in rows] == sorted([POOL, POSTGRES])
    assert served.call("state.export")["written"] is False
    imported = served.call("state.import")
    assert imported["rows"] == 2 and imported["restored"] == 2 and imported["skipped"] == 0


def test_background_update_follows_an_external_commit(served: Served) -> None:
    path = "areas/inbox/kafka-retention-is-seven-days.html"
    sha = external_commit(
        served.store,
        {path: memory_html("Kafka retention is seven days", "Kafka retention is seven days.")},
    )
    # Nobody asks the daemon anything: the ref poll advances, the advance schedules the update.
    served.wait_indexed(sha)
    assert served.call("index.status")["head_sha"] == sha
    hits = served.call("search", query="kafka retention", plane="index")["hits"]
    assert hits[0]["path"] == path


def test_a_session_commit_with_provenance_is_found_from_its_transcript(served: Served) -> None:
    sid = "5b1f0c7e-1111-4222-8333-944455556666"
    opened = served.call("session.open")
    path = "areas/inbox/redis-holds-the-session-cache.html"
    html = memory_html("Redis holds the session cache", "Redis holds the session cache.")
    applied = served.call(
        "session.apply", session=opened["session"], ops=[{"op": "put", "path": path, "html": html}]
    )
    assert applied["violations"] == []
    with pytest.raises(InvalidParams):
        served.call("session.commit", session=opened["session"], prompt_id="p-without-session")
    result = served.call(
        "session.commit",
        session=opened["session"],
        message="remember redis",
        session_id=sid,
        prompt_id="pr_1",
        turn="u-1",
    )
    assert result["outcome"] == "committed" and result["paths"] == [path]
    record = served.call("read", path=path)["record"]
    assert (record["session_id"], record["prompt_id"], record["turn_uuid"]) == (sid, "pr_1", "u-1")

    # Before the transcript is indexed the links are already there.
    early = served.call("traces.show", session=sid)
    assert early["indexed"] is False
    assert [
        (m["path"], m["link_kind"], m["prompt_id"], m["turn_uuid"]) for m in early["memories"]
    ] == [(path, "wrote", "pr_1", "u-1")]

    write_transcript(served.trace_root, sid, "Where does the session cache live? Redis please")
    report = served.call("traces.index")
    assert report["files_seen"] == 1 and report["files_read"] == 1 and report["sessions"] == 1
    assert report["trace_root"] == str(served.trace_root)
    again = served.call("traces.index")
    assert again["files_read"] == 0 and again["files_skipped"] == 1
    hits = served.call("traces.search", query="session cache")["hits"]
    assert [h["session_id"] for h in hits] == [sid]
    shown = served.call("traces.show", session=sid[:8])
    assert shown["indexed"] is True and shown["session_id"] == sid
    assert [m["path"] for m in shown["memories"]] == [path]
    assert shown["prompts"] and shown["prompts"][0]["text_head"].startswith("Where does")


def test_the_typed_calls_decode_the_plane_s_answers(served: Served) -> None:
    """Each typed plane call decodes the daemon's answer into the Struct the plane built, with
    every field the untyped call sees."""
    with Client(served.daemon.socket_path, timeout=60) as c:
        pack = c.recall("connection pool size", budget_chars=500)
        assert isinstance(pack, RecallAnswer) and pack.entries[0].path == POOL
        plain = c.call("recall", {"query": "connection pool size", "budget_chars": 500})
        assert msgspec.to_builtins(pack) == plain
        found = c.index_search("postgres system of record", limit=3)
        assert isinstance(found, IndexSearchAnswer) and found.hits[0].path == POSTGRES
        status = msgspec.to_builtins(c.index_status())
        assert status.keys() == c.call("index.status").keys() and status["indexed"] is True
        assert isinstance(c.traces_search(limit=5), TracesSearchAnswer)
        with pytest.raises(SessionNotFound):
            c.traces_show("no-such-session")


def test_traces_show_of_an_unknown_session_is_session_not_found(served: Served) -> None:
    with pytest.raises(SessionNotFound):
        served.call("traces.show", session="no-such-session")
    with pytest.raises(InvalidParams):
        served.call("traces.search", query="x", limit=0)


def test_stale_index_and_model_mismatch_are_typed_errors(tmp_path: Path) -> None:
    s = serve(tmp_path, ("--embedder", "hash"))
    try:
        s.wait_indexed(s.seed)
        rebuilt = s.call("index.rebuild", embed=True)
        assert rebuilt["mode"] == "rebuild" and rebuilt["embeddings_written"] >= 5
        assert s.call("index.status")["vectors"]["coverage"] == 1.0
        index_db = Path(s.call("status")["index_path"])
        with sqlite3.connect(index_db) as conn:
            space = conn.execute("SELECT embed_model FROM index_state").fetchone()[0]
            conn.execute("UPDATE index_state SET embed_model = 'another-model@8'")
        with pytest.raises(EmbedModelMismatch):
            s.call("index.update")
        # The background update meets the same refusal: logged and kept, never fatal.
        sha = external_commit(s.store, {"areas/inbox/x.html": memory_html("X is ten", "X is ten.")})
        assert wait_for(
            lambda: s.call("status")["index"]["last_error_code"] == "ERR_EMBED_MODEL_MISMATCH",
            30,
            0.05,
        ), s.daemon.log()[-2000:]
        assert s.call("status")["sha"] == sha
        with sqlite3.connect(index_db) as conn:
            conn.execute("UPDATE index_state SET embed_model = ?, head_sha = NULL", (space,))
        with pytest.raises(IndexStale):
            s.call("index.update")
        with pytest.raises(IndexStale):
            s.call("search", query="x", plane="index")
        with pytest.raises(IndexStale):
            s.call("recall", query="x")
        assert s.call("index.rebuild", embed=True)["head_sha"] == sha
        answer = s.call("search", query="x is ten", plane="index")
        assert answer["hits"][0]["path"] == "areas/inbox/x.html"
        # The readers see the writer's vectors: the vector arm runs (hash embedder).
        assert "vector" in answer["arms"] and answer["degraded"] is False
    finally:
        s.daemon.stop()
