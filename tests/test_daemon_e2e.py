"""The real daemon in a subprocess, over its real socket, on a small real store.

One daemon serves the whole module (started once); tests that must stop or replace a daemon
start their own. Raw sockets pin the wire; the sync client pins the methods.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, connect, read_line, request_line, short_socket_dir, wait_for
from support.git import external_commit, git
from support.memory import memory_html
from support.stores import BASE_FILES, make_store

from headd.errors import GitFailure, InvalidParams, MethodNotFound, PathNotFound, WriteConflict

POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
POOL = "resources/database/connection-pool-size-is-forty.html"
SHORT = "areas/inbox/user-prefers-short-answers.html"

STATUS_FIELDS = {
    "store",
    "ref",
    "sha",
    "records",
    "skipped",
    "load_source",
    "load_ms",
    "advances",
    "last_advance_ms",
    "vectors",
    "sessions",
    "index_path",
    "state_path",
    "uptime_s",
    "pid",
    "version",
}


class Served:
    def __init__(self, store: Path, seed_sha: str, daemon: Daemon) -> None:
        self.store = store
        self.seed_sha = seed_sha
        self.daemon = daemon

    def client(self) -> Client:
        return Client(self.daemon.socket_path, timeout=30)

    def call(self, method: str, **params: Any) -> Any:
        with self.client() as c:
            return c.call(method, params)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = tmp_path_factory.mktemp("e2e") / "store"
    sha = make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    yield Served(store, sha, daemon.wait_ready())
    assert daemon.stop() == 0, daemon.log()


# -- status and reads ----------------------------------------------------------------------


def test_status_has_the_contract_fields(served: Served) -> None:
    status = served.call("status")
    assert set(status) >= STATUS_FIELDS
    assert status["pid"] == served.daemon.proc.pid
    assert status["ref"] == "refs/heads/main"
    assert status["records"] == 5 and status["skipped"] == 1
    assert status["load_source"] == "git"
    assert set(status["vectors"]) == {"space", "entries", "coverage"}


def test_vectors_are_filled_in_the_background_and_used_by_search(served: Served) -> None:
    assert wait_for(lambda: served.call("status")["vectors"]["coverage"] == 1.0, timeout=20)
    vectors = served.call("status")["vectors"]
    assert vectors["space"] == "headd-hash-v1@256" and vectors["entries"] == 10  # with titles
    result = served.call("search", query="postgres orders")
    assert result["degraded"] is False and "vector" in result["arms"]
    assert "vector" in result["hits"][0]["arms"]
    lexical_only = served.call("search", query="postgres orders", vectors=False)
    assert lexical_only["degraded"] is True
    assert result["vectors"] == {"coverage": 1.0}
    index = sqlite3.connect(served.store / ".memhtml" / "headd" / "index.db")
    spaces = index.execute("SELECT space, count(*) FROM head_vectors GROUP BY space").fetchall()
    index.close()
    assert spaces == [("headd-hash-v1@256", 10)]  # in the SQLite plane, one space


def test_search_read_and_indexes(served: Served) -> None:
    result = served.call("search", query="postgres orders", limit=3)
    assert result["hits"][0]["path"] == POSTGRES
    assert set(result) >= {"sha", "hits", "arms", "degraded", "took_ms"}
    hit = result["hits"][0]
    assert set(hit) == {"path", "score", "title", "claim", "arms"}
    assert "lexical" in hit["arms"]

    record = served.call("read", path=SHORT)["record"]
    assert record["entities"] == ["person:dana"] and record["memory_type"] == "user_preference"
    assert served.call("read", path="areas/none.html")["record"] is None

    got = served.call("by_content_hash", hash=record["content_hash"])
    assert got["paths"] == [SHORT]
    got = served.call("by_entity", entity="service:checkout-api")
    assert got["paths"] == sorted([POSTGRES, POOL])
    assert served.call("inbound", href="/" + POSTGRES)["paths"] == [POOL]
    assert served.call("by_frame_key", key="no such key")["paths"] == []
    skipped = served.call("skipped")
    assert [f["path"] for f in skipped["files"]] == ["areas/inbox/broken-memory.html"]
    assert skipped["files"][0]["reason"]


def test_reads_at_an_older_commit_and_errors_for_unknown_ones(served: Served) -> None:
    got = served.call("read", path=SHORT, at=served.seed_sha)
    assert got["sha"] == served.seed_sha and got["record"] is not None
    with pytest.raises(GitFailure) as info:
        served.call("read", path=SHORT, at="0" * 40)
    assert info.value.code == "ERR_GIT"


def test_resolve_unknown_path_is_path_not_found(served: Served) -> None:
    with pytest.raises(PathNotFound):
        served.call("resolve", path="areas/nothing-here.html")
    assert served.call("resolve", path=SHORT)["path"] == SHORT


def test_invalid_params_and_unserved_methods(served: Served) -> None:
    with pytest.raises(InvalidParams):
        served.call("search", query="x", limit=0)
    with pytest.raises(InvalidParams):
        served.call("read", paths="x")
    with pytest.raises(MethodNotFound):
        served.call("vectors.fill.all")
    with pytest.raises(InvalidParams):
        served.call("vectors.fill", limit=-1)
    with pytest.raises(InvalidParams):
        served.call("search", query="x", plane="sqlite")


# -- the wire ------------------------------------------------------------------------------


def test_batch_notification_and_malformed_lines_on_one_connection(served: Served) -> None:
    with connect(served.daemon.socket_path) as sock:
        buf = bytearray()
        sock.sendall(request_line("status", request_id=None))  # a notification: no answer
        sock.sendall(b"{not json\n")
        assert json.loads(read_line(sock, buf))["error"]["code"] == -32700
        sock.sendall(b'{"jsonrpc":"2.0","id":5}\n')
        got = json.loads(read_line(sock, buf))
        assert got["error"]["code"] == -32600 and got["id"] == 5
        batch = [
            {"jsonrpc": "2.0", "id": "a", "method": "status"},
            {"jsonrpc": "2.0", "method": "status"},
            {"jsonrpc": "2.0", "id": "b", "method": "read", "params": {"path": SHORT}},
        ]
        sock.sendall(json.dumps(batch).encode() + b"\n")
        answers = json.loads(read_line(sock, buf))
        assert [a["id"] for a in answers] == ["a", "b"]
        assert answers[1]["result"]["record"]["path"] == SHORT
        # answered in order: three pipelined requests come back in the order sent
        sock.sendall(b"".join(request_line("status", request_id=i) for i in (10, 11, 12)))
        assert [json.loads(read_line(sock, buf))["id"] for _ in range(3)] == [10, 11, 12]


def test_an_oversized_line_gets_an_error_then_the_connection_closes(served: Served) -> None:
    with connect(served.daemon.socket_path) as sock:
        buf = bytearray()
        # the daemon may close before we finish writing; its answer is sent by then
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"[" + b" " * (8 * 1024 * 1024) + b"]\n")
        got = json.loads(read_line(sock, buf))
        assert got["error"]["code"] == -32600 and "8388608" in got["error"]["message"]
        assert read_line(sock, buf) == b""
    assert served.call("status")["records"] == 5


def test_socket_is_0600(served: Served) -> None:
    assert stat.S_IMODE(os.lstat(served.daemon.socket_path).st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another uid")
def test_a_peer_of_another_uid_is_refused(served: Served) -> None:
    path = served.daemon.socket_path
    os.chmod(path, 0o666)
    os.chmod(path.parent, 0o755)
    try:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: become nobody, connect, report what came back
            os.close(read_fd)
            code = b"?"
            try:
                os.setgid(65534)
                os.setuid(65534)
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(5)
                    sock.connect(str(path))
                    sock.sendall(request_line("status"))
                    code = b"answered" if sock.recv(65536) else b"closed"
            except OSError as exc:
                code = f"oserror {exc}".encode()
            os.write(write_fd, code)
            os._exit(0)
        os.close(write_fd)
        os.waitpid(pid, 0)
        with os.fdopen(read_fd, "rb") as fh:
            outcome = fh.read()
    finally:
        os.chmod(path, 0o600)
    assert outcome != b"answered" and b"Permission denied" not in outcome, outcome
    assert "refused a peer of uid 65534" in served.daemon.log()


# -- following the branch ------------------------------------------------------------------


def test_an_external_commit_is_picked_up_in_the_background(served: Served) -> None:
    before = served.call("status")
    new_path = "areas/inbox/kafka-retention-is-seven-days.html"
    start = time.monotonic()
    sha = external_commit(
        served.store,
        {new_path: memory_html("Kafka retention", "Kafka retention is seven days.")},
        "add kafka",
    )
    committed = time.monotonic()
    log_mark = "advanced " + before["sha"][:12]
    assert wait_for(lambda: log_mark in served.daemon.log(), timeout=5, interval=0.005)
    picked = time.monotonic()
    status = served.call("status")
    assert status["sha"] == sha and status["records"] == 6
    assert status["advances"] == before["advances"] + 1
    assert status["last_advance_by"] == "background"
    print(f"background pickup {1000 * (picked - committed):.0f} ms after git commit returned")
    assert picked - committed < 1.0, "the 20 ms poll should see a commit well within a second"
    assert picked - start < 5.0
    hits = served.call("search", query="kafka retention")["hits"]
    assert hits[0]["path"] == new_path


def test_every_request_sees_the_ref_as_it_is_when_it_arrives(served: Served) -> None:
    new_path = "areas/inbox/redis-holds-sessions.html"
    sha = external_commit(
        served.store,
        {new_path: memory_html("Redis holds sessions", "Redis holds the web sessions.")},
    )
    # no wait: the very next request must already answer at the new commit
    got = served.call("read", path=new_path)
    assert got["sha"] == sha and got["record"]["title"] == "Redis holds sessions"


def test_advance_to_an_older_commit_and_back(served: Served) -> None:
    tip = served.call("status")["sha"]
    report = served.call("advance", to=served.seed_sha)
    assert report["sha"] == served.seed_sha and report["from"] == tip
    assert report["changed"] >= 1
    assert served.call("status")["sha"] == tip, "advance to= loads a version, it does not move us"
    again = served.call("advance")
    assert again["sha"] == tip and again["changed"] == 0


def test_resolve_follows_archive_moves_and_supersedes(served: Served) -> None:
    old = "areas/inbox/deploys-run-through-the-release-train.html"
    newer = "areas/inbox/deploys-run-through-the-daily-train.html"
    archived = "archive/2026/" + old
    git(served.store, "rm", "-q", old)
    external_commit(
        served.store,
        {
            archived: BASE_FILES[old].replace('content="active"', 'content="archived"'),
            newer: memory_html(
                "Deploys run through the daily train",
                "Deploys run through the daily release train.",
                links=(("supersedes", "/" + old),),
            ),
        },
        "supersede",
    )
    got = served.call("resolve", path=old)
    assert got["path"] == newer
    assert got["chain"] == [old, archived, newer]


# -- sessions --------------------------------------------------------------------------------


def test_a_session_writes_reads_through_and_commits(served: Served) -> None:
    path = "areas/inbox/grafana-is-the-dashboard.html"
    html = memory_html("Grafana is the dashboard", "Grafana is the team dashboard.")
    with served.client() as c:
        opened = c.call("session.open", {"id": "e2e-1"})
        assert opened["session"] == "e2e-1"
        applied = c.call(
            "session.apply",
            {"session": "e2e-1", "ops": [{"op": "put", "path": path, "html": html}]},
        )
        assert applied["ops"] == 1 and applied["violations"] == []
        assert c.call("read", {"path": path, "session": "e2e-1"})["record"]["title"].startswith(
            "Grafana"
        )
        assert c.call("read", {"path": path})["record"] is None
        listed = c.call("session.list")
        assert "e2e-1" in [s["session"] for s in listed["sessions"]]
        committed = c.call("session.commit", {"session": "e2e-1", "message": "grafana"})
        assert committed["outcome"] == "committed", committed
        # Read-your-writes on the same connection: the next search and read see the commit.
        found = c.call("search", {"query": "grafana team dashboard", "vectors": False})
        assert found["sha"] == committed["sha"] and found["hits"][0]["path"] == path
        assert c.call("status")["sha"] == committed["sha"]
        assert c.call("read", {"path": path})["record"] is not None
        closed = c.call("session.close", {"session": "e2e-1"})
        assert closed["session"] == "e2e-1"


def test_a_session_on_an_old_base_is_told_to_rebase_then_lands(served: Served) -> None:
    path = "areas/inbox/vault-holds-the-secrets.html"
    html = memory_html("Vault holds the secrets", "Vault holds the deploy secrets.")
    with served.client() as c:
        opened = c.call("session.open", {"id": "e2e-old", "base": served.seed_sha})
        assert opened["base"] == served.seed_sha
        c.call(
            "session.apply",
            {"session": "e2e-old", "ops": [{"op": "put", "path": path, "html": html}]},
        )
        hits = c.call("search", {"query": "vault deploy secrets", "session": "e2e-old"})["hits"]
        assert hits and hits[0]["path"] == path, "a session's reads see its own writes"
        first = c.call("session.commit", {"session": "e2e-old"})
        assert first["outcome"] == "rebase-needed", first
        tip = c.call("status")["sha"]
        rebased = c.call("session.rebase", {"session": "e2e-old"})
        assert rebased["base"] == tip
        second = c.call("session.commit", {"session": "e2e-old", "message": "vault"})
        assert second["outcome"] == "committed", second
        assert c.call("read", {"path": path})["sha"] == second["sha"]
        c.call("session.close", {"session": "e2e-old"})
        with pytest.raises(WriteConflict):
            c.call("session.open", {"id": "e2e-twice", "base": served.seed_sha})
            c.call("session.open", {"id": "e2e-twice", "base": tip})


def test_session_errors_have_their_codes(served: Served) -> None:
    with served.client() as c:
        with pytest.raises(Exception) as info:
            c.call("session.commit", {"session": "never-opened"})
        assert getattr(info.value, "code", None) == "ERR_SESSION_NOT_FOUND"
        with pytest.raises(Exception) as info:
            c.call("session.open", {"id": "../escape"})
        assert getattr(info.value, "code", None) == "ERR_INVALID_OP"


def test_a_client_that_disconnects_mid_request_does_not_hurt_the_daemon(served: Served) -> None:
    for _ in range(5):
        sock = connect(served.daemon.socket_path)
        batch = [json.loads(request_line("search", {"query": "postgres"}, i)) for i in range(300)]
        sock.sendall(json.dumps(batch).encode() + b"\n")
        sock.close()
    assert served.call("status")["pid"] == served.daemon.proc.pid


# -- processes ---------------------------------------------------------------------------------


def test_a_second_daemon_on_the_same_socket_is_refused(served: Served) -> None:
    second = Daemon(served.store, served.daemon.socket_path)
    assert second.proc.wait(30) == 1
    assert "ERR_DAEMON_RUNNING" in second.log()
    second.stop()
    assert served.call("status")["pid"] == served.daemon.proc.pid


def concurrent_requests_after_a_move_cause_one_advance(store: Path, path: Path) -> None:
    """Many requests that all see the ref moved: exactly one advance, all answer at the tip."""
    with Client(path) as c:
        before = c.call("status")["advances"]
    socks = [connect(path) for _ in range(12)]
    sha = external_commit(
        store,
        {"areas/inbox/nginx-fronts-the-api.html": memory_html("Nginx", "Nginx fronts the API.")},
    )
    for i, sock in enumerate(socks):
        sock.sendall(request_line("status", request_id=i))
    answers = [json.loads(read_line(sock))["result"] for sock in socks]
    for sock in socks:
        sock.close()
    assert {a["sha"] for a in answers} == {sha}
    with Client(path) as c:
        status = c.call("status")
    assert status["advances"] == before + 1
    assert status["last_advance_by"] == "request"


def test_stale_socket_replaced_then_sigterm_finishes_in_flight_requests(tmp_path: Path) -> None:
    """One daemon for three facts: it replaces a stale socket file at start; concurrent
    requests after a move advance once; and on SIGTERM it finishes the request in flight (an answer the client has not read yet, so its
    write is still pending), exits 0 and removes its socket."""
    store = tmp_path / "store"
    make_store(store)
    path = short_socket_dir() / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays with nobody listening: what a SIGKILLed daemon leaves
    # background following off, so the requests below are what notices the move
    daemon = Daemon(store, path, extra=["--follow-interval", "3600"]).wait_ready()
    try:
        assert "removing stale socket" in daemon.log()
        concurrent_requests_after_a_move_cause_one_advance(store, path)
        sock = connect(path)
        batch = [json.loads(request_line("read", {"path": SHORT}, i)) for i in range(800)]
        sock.sendall(json.dumps(batch).encode() + b"\n")
        # The first byte of the answer arrives once the daemon is writing it; the rest (~1 MB)
        # cannot fit in the socket buffer until we read, so the request is still in flight.
        pending = bytearray(sock.recv(1))
        assert pending, "the daemon closed instead of answering"
        daemon.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)  # let the signal land while the write is blocked on us
        answer = json.loads(read_line(sock, pending))
        sock.close()
        assert len(answer) == 800 and all(a["result"]["record"]["path"] == SHORT for a in answer)
        assert daemon.proc.wait(30) == 0
    finally:
        daemon.stop()
    assert not path.exists()
    log = daemon.log()
    assert "stopped accepting; 1 requests in flight" in log, "the batch was in flight"
    assert "removed socket" in log
