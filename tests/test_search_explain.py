"""``search`` with ``explain`` over a real daemon's socket: each hit's ``why`` splits its score
by the arms that found it, and without ``explain`` no hit carries one (the answer's bytes are
those of a search that never heard of it)."""

from __future__ import annotations

from pathlib import Path

from headd_client import calls
from headd_client.sync_client import Client
from support.daemon import Daemon, short_socket_dir, wait_for
from support.stores import make_store


def test_explain_answers_why_each_hit_ranked(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    daemon = Daemon(store, short_socket_dir() / "head.sock", extra=["--embedder", "hash"])
    daemon.wait_ready()
    try:
        with Client(daemon.socket_path, timeout=30) as client:
            assert wait_for(lambda: client.call("status")["vectors"]["coverage"] == 1.0, 20)
            plain = client.call("search", {"query": "postgres orders"})
            assert plain["hits"] and all("why" not in hit for hit in plain["hits"])
            answer = client.run(calls.search("postgres orders", explain=True))
            assert [h.path for h in answer.hits] == [h["path"] for h in plain["hits"]]
            assert any("vector" in hit.arms for hit in answer.hits)
            for hit in answer.hits:
                assert isinstance(hit.why, dict)
                assert set(hit.why) <= set(hit.arms) - {"recency"}
                assert abs(sum(hit.why.values()) - hit.score) < 1e-9
    finally:
        assert daemon.stop() == 0, daemon.log()
