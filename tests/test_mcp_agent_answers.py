"""What an agent meets through ``headctl mcp``: answers that are right for the question asked.

Each test drives the bridge with the official MCP SDK's client over stdio against a real daemon
on a real git store, as an agent does, and holds one defect an agent ran into.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.daemon import Daemon, short_socket_dir
from support.git import external_commit, git
from support.mcp import bridge, error_text, structured
from support.memory import memory_html
from support.stores import make_store

POOL = "resources/database/connection-pool-size-is-forty.html"


async def correct_pool(client: Any) -> dict[str, Any]:
    """``memory_correct`` of the pool memory into "Connection limit is sixty"; its answer."""
    answer = await client.call_tool(
        "memory_correct",
        {
            "target_path": POOL,
            "title": "Connection limit is sixty",
            "body": "The database connection limit is sixty per pod.",
            "reason": "raised",
        },
    )
    return dict(structured(answer))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Daemon]]:
    """A store made by ``make_store`` and a daemon serving it (hash embedder), stopped after."""
    (root := tmp_path / "store").mkdir()
    make_store(root)
    served = Daemon(root, short_socket_dir() / "h.sock", extra=["--embedder", "hash"])
    yield root, served.wait_ready()
    served.stop()


def test_include_archived_search_finds_the_archived_version(served: tuple[Path, Daemon]) -> None:
    """An agent told to retry with ``include_archived`` before concluding a fact is gone finds
    the archived version, marked with its successor; without the flag it stays out."""

    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            corrected = await correct_pool(client)
            moved = corrected["archived"][0]
            query = {"query": "connection pool size forty"}
            plain = structured(await client.call_tool("memory_search", query))
            assert moved not in [h["path"] for h in plain["hits"]]
            assert plain["archived_matches"] == 0
            wide = structured(
                await client.call_tool("memory_search", {**query, "include_archived": True})
            )
            paths = [h["path"] for h in wide["hits"]]
            assert moved in paths, paths
            hit = wide["hits"][paths.index(moved)]
            assert hit["superseded_by"] == corrected["path"]
            assert "lexical" in hit["arms"]
            # memhtml's pointer is for an emptied scope only: with the archived hits in, none.
            assert (wide["archived_matches"], wide["archived"]) == (0, [])

    anyio.run(go)


def _recalled(pack: dict[str, Any]) -> list[str]:
    sections = pack["sections"]
    return [e["path"] for name in ("arcs", "memories", "lateral") for e in sections[name]]


def test_recall_reads_its_own_writes_at_once(served: tuple[Path, Daemon]) -> None:
    """The first recall of a fresh daemon answers (no index error an agent cannot act on), and
    a recall right after a write finds the new memory, as search does."""
    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            first = await client.call_tool("memory_recall", {"query": "connection pool"})
            assert not first.is_error, first
            status = structured(await client.call_tool("memory_status", {}))
            assert status["index_fresh"] is True
            for n in range(3):
                wrote = structured(
                    await client.call_tool(
                        "memory_write",
                        {
                            "title": f"Heron nest {n}",
                            "memory_type": "semantic",
                            "body": f"The heron nest number {n} sits by the quarry lake.",
                        },
                    )
                )
                pack = structured(
                    await client.call_tool("memory_recall", {"query": f"heron nest number {n}"})
                )
                assert wrote["path"] in _recalled(pack), (n, pack)

    anyio.run(go)


#: A stack trace pasted whole: no sentence end anywhere, 1.5 MB.
TRACE = " ".join(f"at frame{n} (file{n}.js:{n}:{n})" for n in range(60_000))[:1_500_000]


def _answer_bytes(result: Any) -> int:
    return sum(len(getattr(c, "text", "") or "") for c in result.content)


def test_an_oversized_write_is_refused_naming_the_limit(served: tuple[Path, Daemon]) -> None:
    """A 1.5 MB body is refused with ERR_TOO_LARGE naming the limit, and nothing lands."""
    from headd.limits import MAX_MEMORY_BYTES

    store, daemon = served
    before = git(store, "rev-parse", "main")

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            refused = await client.call_tool(
                "memory_write",
                {"title": "Crash trace", "memory_type": "episodic", "body": TRACE},
            )
            assert error_text(refused).startswith("ERR_TOO_LARGE"), error_text(refused)
            assert str(MAX_MEMORY_BYTES) in error_text(refused)

    anyio.run(go)
    assert git(store, "rev-parse", "main") == before


def test_a_long_sentence_less_body_gets_a_bounded_claim(served: tuple[Path, Daemon]) -> None:
    """A body with no sentence end under the size limit: the claim is cut to the bound, the
    rest stays in the body (nothing lost)."""
    from headd.limits import MAX_CLAIM_CHARS

    store, daemon = served
    trace = TRACE[:20_000]

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            wrote = structured(
                await client.call_tool(
                    "memory_write",
                    {"title": "Crash trace", "memory_type": "episodic", "body": trace},
                )
            )
            read = structured(await client.call_tool("memory_read", {"path": wrote["path"]}))
            assert 0 < len(read["gist"]) <= MAX_CLAIM_CHARS
            assert trace.startswith(read["gist"])
            assert read["body"].rstrip().endswith(trace[-200:].rstrip()), read["body"][-300:]

    anyio.run(go)


def test_one_oversized_memory_does_not_bloat_other_answers(served: tuple[Path, Daemon]) -> None:
    """A 1.5 MB memory committed by plain git: searches, lists and recalls stay small, and
    memory_read carries its article once."""
    store, daemon = served
    path = "areas/inbox/crash-trace.html"
    external_commit(store, {path: memory_html("Crash trace connection pool", TRACE)})

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            for tool, args in (
                ("memory_search", {"query": "connection pool frame1"}),
                ("memory_list", {}),
                ("memory_recall", {"query": "connection pool frame1"}),
            ):
                result = await client.call_tool(tool, args)
                assert not result.is_error, (tool, result)
                assert _answer_bytes(result) < 40_000, (tool, _answer_bytes(result))
            found = structured(await client.call_tool("memory_search", {"query": "frame1"}))
            assert path in [h["path"] for h in found["hits"]]
            read = await client.call_tool("memory_read", {"path": path})
            assert _answer_bytes(read) < 1.2 * len(TRACE), _answer_bytes(read)

    anyio.run(go)


def test_a_memory_corrected_twice_keeps_both_archived_versions(
    served: tuple[Path, Daemon],
) -> None:
    """One path archived twice in one year (corrected, written again, corrected again): the
    second archived copy goes beside the first (``archive/<YYYY>/2/<path>``), both stay at the
    tip, searchable with ``include_archived``, and resolve walks each to its live successor."""
    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            moved, live = [], []
            for n, size in enumerate(("fifty", "sixty")):
                if n:
                    await client.call_tool(
                        "memory_write",
                        {
                            "title": "Pool size",
                            "memory_type": "semantic",
                            "body": "The connection pool size is fifty per pod.",
                            "path": POOL,
                        },
                    )
                fixed = structured(
                    await client.call_tool(
                        "memory_correct",
                        {
                            "target_path": POOL,
                            "title": f"Connection pool size is {size}",
                            "body": f"The connection pool size is {size} per pod, from now.",
                            "reason": f"raised {n}",
                        },
                    )
                )
                moved.append(fixed["archived"][0])
                live.append(fixed["path"])
            year = moved[0].split("/")[1]
            assert moved == [f"archive/{year}/{POOL}", f"archive/{year}/2/{POOL}"]
            tree = git(store, "ls-tree", "-r", "--name-only", "main").splitlines()
            assert set(moved) <= set(tree)
            assert "forty" in git(store, "show", f"main:{moved[0]}")
            assert "fifty" in git(store, "show", f"main:{moved[1]}")
            wide = structured(
                await client.call_tool(
                    "memory_search",
                    {"query": "connection pool size", "include_archived": True, "limit": 20},
                )
            )
            assert set(moved) <= {h["path"] for h in wide["hits"]}
            for path, successor in zip(moved, live, strict=True):
                walked = structured(await client.call_tool("memory_resolve", {"path": path}))
                assert walked["stop_reason"] == "live" and walked["path"] == successor, walked

    anyio.run(go)


def test_an_archive_reason_is_kept_whole(served: tuple[Path, Daemon]) -> None:
    """A long path and a long reason: the commit subject is capped, the reason is not lost."""
    store, daemon = served
    reason = "superseded by the new pooling policy agreed with the database team in November"

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            done = structured(
                await client.call_tool("memory_archive", {"path": POOL, "reason": reason})
            )
            message = git(store, "log", "-1", "--format=%B", done["commit_sha"])
            assert reason in " ".join(message.split()), message

    anyio.run(go)


def test_an_empty_or_blank_query_is_a_usage_error(served: tuple[Path, Daemon]) -> None:
    """A blank query has no answer to give: the tool says which argument to fix instead of
    answering nothing (search) or an arbitrary pack (recall)."""
    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            for tool in ("memory_search", "memory_recall"):
                for query in ("", "   \n"):
                    text = error_text(await client.call_tool(tool, {"query": query}))
                    assert text.startswith("ERR_INVALID_PARAMS: "), text
                    assert "`query` is empty" in text

    anyio.run(go)


#: memhtml 0.15.1's answers to the calls below on the same store (``make_store``), recorded
#: through ``memhtml serve mcp`` with MEMHTML_EMBED=off; ``YYYY`` is the year of the run.
MEMHTML_ANSWERS: dict[str, Any] = {
    "scoped": {
        "hits": [],
        "scope_empty": True,
        "archived_matches": 2,
        "archived": [
            {
                "path": "archive/YYYY/areas/inbox/postgres-is-the-system-of-record.html",
                "superseded_by": None,
            },
            {
                "path": "archive/YYYY/resources/database/connection-pool-size-is-forty.html",
                "superseded_by": "areas/inbox/connection-limit-is-sixty.html",
            },
        ],
    },
    "scoped_with_archived": {
        "hits": [
            (
                "archive/YYYY/resources/database/connection-pool-size-is-forty.html",
                "areas/inbox/connection-limit-is-sixty.html",
            ),
            ("archive/YYYY/areas/inbox/postgres-is-the-system-of-record.html", None),
        ],
        "scope_empty": False,
        "archived_matches": 0,
        "archived": [],
    },
    "no_such_type": {"hits": [], "scope_empty": True, "archived_matches": 0, "archived": []},
    "recall_first": "areas/inbox/connection-limit-is-sixty.html",
}


def test_archived_search_and_recall_agree_with_memhtml(served: tuple[Path, Daemon]) -> None:
    """The same correction, archive and searches memhtml 0.15.1 answered (recorded above): an
    emptied scope points at the archived memories it admits, with their successors;
    ``include_archived`` ranks them in and the pointer is empty; recall leaves them out."""
    store, daemon = served

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            corrected = await correct_pool(client)
            year = corrected["archived"][0].split("/")[1]
            assert corrected["path"] == "areas/inbox/connection-limit-is-sixty.html"
            await client.call_tool(
                "memory_archive",
                {"path": "areas/inbox/postgres-is-the-system-of-record.html", "reason": "moved"},
            )
            expected = json.loads(json.dumps(MEMHTML_ANSWERS).replace("YYYY", year))
            scope = {"query": "connection pool", "entity": "service:checkout-api"}
            for name, args in (
                ("scoped", scope),
                ("scoped_with_archived", {**scope, "include_archived": True}),
                ("no_such_type", {"query": "orders", "memory_types": ["procedural"]}),
            ):
                got = structured(await client.call_tool("memory_search", args))
                hits = [[h["path"], h["superseded_by"]] for h in got["hits"]]
                want = expected[name]
                # memhtml's recency and salience arms also rank memories sharing no word with
                # the query; the head ranks only what its lexical or vector arm found, so ours are
                # memhtml's hits that match, each with memhtml's successor.
                assert all(hit in want["hits"] for hit in hits), (name, hits)
                assert bool(hits) == bool(want["hits"]), name
                for key in ("scope_empty", "archived_matches", "archived"):
                    assert got[key] == want[key], (name, key, got[key])
            pack = structured(
                await client.call_tool("memory_recall", {"query": "connection pool size forty"})
            )
            recalled = _recalled(pack)
            assert recalled[0] == expected["recall_first"], recalled
            assert not any(p.startswith("archive/") for p in recalled)

    anyio.run(go)
