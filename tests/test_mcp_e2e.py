"""``headctl mcp`` end to end: the official MCP SDK's client over stdio, real stores, real daemons.

Every ``call_tool`` here goes through the SDK, which validates each result's structured content
against the tool's published output schema, whose required fields are memhtml 0.15.1's: a result
missing one of memhtml's fields fails the call. Writes are checked against git itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from headd_client.mcp.protocol import handshake_lines
from support.daemon import Daemon, short_socket_dir
from support.git import external_commit, git
from support.mcp import (
    bridge,
    bridge_args,
    bridge_env,
    daemon_pid,
    error_text,
    memhtml_tools,
    stop_spawned,
    structured,
)
from support.memory import memory_html
from support.stores import make_store

SHORT = "areas/inbox/user-prefers-short-answers.html"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    make_store(root)
    return root


@pytest.fixture
def daemon(store: Path):
    sock = short_socket_dir() / "h.sock"
    d = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
    yield d
    d.stop()


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_list_matches_memhtml_names_and_input_schemas(store: Path, mode: str) -> None:
    """Both protocol eras (the handshake and the stateless 2026-07-28 one the SDK probes for)
    list memhtml's fifteen tools with its input schemas; the daemon is spawned by the bridge."""
    sock = short_socket_dir() / "h.sock"
    reference = memhtml_tools()

    async def go() -> None:
        async with bridge(store, sock, mode=mode) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            # memhtml's fifteen, and code-mode's memory_exec, which memhtml has no tool for
            assert sorted(listed) == sorted([*reference, "memory_exec"])
            for name, tool in listed.items():
                if name not in reference:
                    continue
                assert tool.input_schema == reference[name]["inputSchema"], name
                assert tool.output_schema is not None
                for field in reference[name]["outputSchema"]["required"]:
                    assert field in tool.output_schema["properties"], (name, field)
            assert listed["memory_search"].annotations.read_only_hint is True
            assert listed["memory_write"].annotations.read_only_hint is False
            assert listed["memory_archive"].annotations.destructive_hint is True
            templates = await client.list_resource_templates()
            assert {t.uri_template for t in templates.resource_templates} == {
                "memhtml://file/{path}",
                "memhtml://at/{commit}/{path}",
            }
            status = structured(await client.call_tool("memory_status", {}))
            assert status["head_sha"] == git(store, "rev-parse", "main")

    try:
        run(go)
        assert daemon_pid(sock) is not None, "the bridge spawned no daemon"
        assert (store / ".memhtml" / "headd" / "daemon.log").exists()
    finally:
        stop_spawned(sock)


def test_write_is_a_commit_in_the_tip_tree_and_dedups(store: Path, daemon: Daemon) -> None:
    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            args = {
                "title": "Pool ceiling is 64",
                "memory_type": "semantic",
                "body": "The pool ceiling is 64 per pod. Raised after the outage.",
                "tags": ["infra"],
            }
            wrote = structured(await client.call_tool("memory_write", args))
            assert wrote["created"] and not wrote["deduped"]
            assert wrote["path"] == "resources/infra/pool-ceiling-is-64.html"
            assert wrote["commit_sha"] == git(store, "rev-parse", "main")
            tree = git(store, "ls-tree", "-r", "--name-only", wrote["commit_sha"]).splitlines()
            assert wrote["path"] in tree
            again = structured(await client.call_tool("memory_write", {**args, "title": "Other"}))
            assert again["deduped"] and again["existing_path"] == wrote["path"]
            assert again["commit_sha"] is None
            assert git(store, "rev-parse", "main") == wrote["commit_sha"]
            read = structured(await client.call_tool("memory_read", {"path": wrote["path"]}))
            assert read["gist"] == "The pool ceiling is 64 per pod."
            assert read["meta"]["tag:infra"] == "true"
            occupied = await client.call_tool(
                "memory_write", {**args, "body": "Something else.", "path": wrote["path"]}
            )
            assert error_text(occupied).startswith("ERR_WRITE_CONFLICT")

    run(go)


def test_plain_git_commit_is_found_by_the_next_search(store: Path, daemon: Daemon) -> None:
    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            before = structured(await client.call_tool("memory_search", {"query": "zebrafish"}))
            path = "areas/inbox/zebrafish-tank-is-cleaned-weekly.html"
            sha = external_commit(
                store,
                {path: memory_html("Zebrafish tank", "The zebrafish tank is cleaned weekly.")},
            )
            after = structured(await client.call_tool("memory_search", {"query": "zebrafish"}))
            assert path not in [h["path"] for h in before["hits"]]
            assert after["hits"][0]["path"] == path
            assert after["sha"] == sha
            # the hit's fields in memhtml's shape, from the hit and the record it carries
            hit = after["hits"][0]
            claim = "The zebrafish tank is cleaned weekly."
            assert (hit["title"], hit["gist"], hit["confidence"]) == ("Zebrafish tank", claim, 1.0)
            assert claim in hit["snippet"] and hit["memory_type"] and hit["superseded_by"] is None
            status = structured(await client.call_tool("memory_status", {}))
            assert status["head_sha"] == sha and status["dirty"] is False
            (store / path).write_text("edited, not committed\n", encoding="utf-8")
            edited = structured(await client.call_tool("memory_status", {}))
            assert edited["dirty"] is True and edited["head_sha"] == sha

    run(go)


def test_two_sessions_writing_eight_each_at_once_all_land(store: Path, daemon: Daemon) -> None:
    base = git(store, "rev-parse", "main")

    async def writer(tag: str, landed: list[str]) -> None:
        async with bridge(store, daemon.socket_path) as client:
            for i in range(8):
                result = await client.call_tool(
                    "memory_write",
                    {
                        "title": f"Writer {tag} fact {i}",
                        "memory_type": "semantic",
                        "body": f"Writer {tag} recorded fact number {i}.",
                    },
                )
                landed.append(structured(result)["path"])

    async def go() -> list[str]:
        landed: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(writer, "a", landed)
            group.start_soon(writer, "b", landed)
        return landed

    landed = run(go)
    assert len(set(landed)) == 16
    tree = set(git(store, "ls-tree", "-r", "--name-only", "main").splitlines())
    assert set(landed) <= tree
    assert git(store, "rev-list", "--count", f"{base}..main") == "16"


def test_invalid_calls_are_tool_errors_with_codes(store: Path, daemon: Daemon) -> None:
    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            arc = await client.call_tool(
                "memory_write", {"title": "An arc", "memory_type": "arc", "body": "An arc."}
            )
            assert error_text(arc).startswith(
                "ERR_INVALID_PARAMS: memory_write: argument `memory_type`"
            )
            neither = await client.call_tool(
                "memory_write", {"title": "x", "memory_type": "semantic"}
            )
            assert error_text(neither).startswith("ERR_INVALID_MEMORY")
            assert "neither was supplied" in error_text(neither)
            both = await client.call_tool(
                "memory_correct",
                {
                    "target_path": "resources/database/connection-pool-size-is-forty.html",
                    "title": "Connection pool size is sixty",
                    "body": "The connection pool size is sixty.",
                    "article_html": "<p><mark>The connection pool size is sixty.</mark></p>",
                    "reason": "raised",
                },
            )
            assert error_text(both).startswith("ERR_INVALID_MEMORY")
            assert "both were supplied" in error_text(both)
            missing = await client.call_tool("memory_read", {"path": "areas/inbox/nope.html"})
            text = error_text(missing)
            assert text.startswith("ERR_PATH_NOT_FOUND") and "Try: call memory_resolve" in text
            unknown = await client.call_tool("memory_bogus", {})
            assert error_text(unknown).startswith("ERR_UNKNOWN_TOOL")
            extra = await client.call_tool("memory_status", {"bogus": 1})
            assert error_text(extra).startswith("ERR_INVALID_PARAMS")
            bad_markup = await client.call_tool(
                "memory_write",
                {"title": "No mark", "memory_type": "semantic", "article_html": "<p>no mark</p>"},
            )
            assert error_text(bad_markup).startswith("ERR_INVALID_MEMORY")
            assert "Traceback" not in text

    run(go)
    assert git(store, "rev-list", "--count", "main") == "1"


def test_correct_archives_links_and_resolve_walks_forward(store: Path, daemon: Daemon) -> None:
    """memhtml's chain: correct archives the target under archive/<YYYY>/ with superseded-by,
    the new file supersedes the archive path; resolve walks archive_move then supersedes."""
    old = "resources/database/connection-pool-size-is-forty.html"

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as client:
            corrected = structured(
                await client.call_tool(
                    "memory_correct",
                    {
                        "target_path": old,
                        "title": "Connection pool size is sixty",
                        "body": "The connection pool size is sixty per pod.",
                        "reason": "raised again",
                    },
                )
            )
            year = corrected["archived"][0].split("/")[1]
            moved = f"archive/{year}/{old}"
            assert corrected["archived"] == corrected["superseded"] == [moved]
            assert corrected["commit_sha"] == git(store, "rev-parse", "main")
            new = structured(await client.call_tool("memory_read", {"path": corrected["path"]}))
            assert {"rel": "supersedes", "href": "/" + moved} in new["links"]
            archived = structured(await client.call_tool("memory_read", {"path": moved}))
            assert (
                archived["archived"] and archived["meta"]["supersededBy"] == "/" + corrected["path"]
            )
            resolved = structured(await client.call_tool("memory_resolve", {"path": old}))
            assert resolved["stop_reason"] == "live" and resolved["path"] == corrected["path"]
            assert [s["via"] for s in resolved["steps"]] == ["archive_move", "supersedes"]
            assert (
                resolved["pinned_uri"]
                == f"memhtml://at/{corrected['commit_sha']}/{corrected['path']}"
            )
            gone = structured(
                await client.call_tool("memory_resolve", {"path": "areas/inbox/never.html"})
            )
            assert gone["stop_reason"] == "unindexed"

            linked = structured(
                await client.call_tool(
                    "memory_link",
                    {"src_path": SHORT, "rel": "relates_to", "dst_path": corrected["path"]},
                )
            )
            assert linked["ok"] and linked["commit_sha"] == git(store, "rev-parse", "main")
            again = structured(
                await client.call_tool(
                    "memory_link",
                    {"src_path": SHORT, "rel": "relates_to", "dst_path": corrected["path"]},
                )
            )
            assert again["commit_sha"] is None
            near = structured(
                await client.call_tool("memory_neighbors", {"path": corrected["path"]})
            )
            assert {(n["path"], n["rel"], n["hop"]) for n in near["nodes"]} >= {
                (SHORT, "relates_to", 1)
            }

            evicted = structured(
                await client.call_tool("memory_archive", {"path": SHORT, "reason": "stale"})
            )
            assert evicted["archive_path"] == f"archive/{year}/{SHORT}"
            walked = structured(await client.call_tool("memory_resolve", {"path": SHORT}))
            assert walked["stop_reason"] == "archived"
            assert [s["via"] for s in walked["steps"]] == ["archive_move"]

            listed = structured(await client.call_tool("memory_list", {"limit": 2}))
            assert (
                len(listed["files"]) == 2 and listed["next_cursor"] == listed["files"][-1]["path"]
            )
            rest = structured(
                await client.call_tool("memory_list", {"cursor": listed["next_cursor"]})
            )
            assert all(f["path"] > listed["next_cursor"] for f in rest["files"])

    run(go)


def test_resources_read_the_tip_and_a_pinned_commit(store: Path, daemon: Daemon) -> None:
    from mcp.shared.exceptions import MCPError

    sha = git(store, "rev-parse", "main")

    async def go() -> None:
        async with bridge(store, daemon.socket_path, mode="auto") as client:
            tip = await client.read_resource(f"memhtml://file/{SHORT}")
            assert tip.contents[0].text.startswith("# User prefers short answers\n\n")
            pinned = await client.read_resource(f"memhtml://at/{sha}/{SHORT}")
            assert pinned.contents[0].text == tip.contents[0].text
            with pytest.raises(MCPError, match="ERR_PATH_NOT_FOUND"):
                await client.read_resource(f"memhtml://at/HEAD/{SHORT}")

    run(go)


def test_no_spawn_without_a_daemon_is_daemon_unavailable(store: Path) -> None:
    sock = short_socket_dir() / "h.sock"

    async def go() -> None:
        async with bridge(store, sock, "--no-spawn") as client:
            result = await client.call_tool("memory_search", {"query": "postgres"})
            assert error_text(result).startswith("ERR_DAEMON_UNAVAILABLE")

    run(go)
    assert daemon_pid(sock) is None


def test_daemon_killed_mid_session_is_reported_then_reconnected(store: Path) -> None:
    sock = short_socket_dir() / "h.sock"
    first = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()

    async def go() -> None:
        async with bridge(store, sock, "--no-spawn") as client:
            assert structured(await client.call_tool("memory_search", {"query": "postgres"}))[
                "hits"
            ]
            first.proc.kill()
            first.proc.wait()
            with anyio.fail_after(60):
                down = await client.call_tool("memory_search", {"query": "postgres"})
            assert error_text(down).startswith("ERR_DAEMON_UNAVAILABLE")
            second = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
            try:
                with anyio.fail_after(60):
                    back = structured(
                        await client.call_tool("memory_search", {"query": "postgres"})
                    )
                assert back["hits"]
            finally:
                second.stop()

    try:
        run(go)
    finally:
        first.stop()


def test_daemon_killed_is_respawned_by_the_bridge(store: Path) -> None:
    sock = short_socket_dir() / "h.sock"

    async def go() -> None:
        async with bridge(store, sock) as client:
            structured(await client.call_tool("memory_status", {}))
            pid = daemon_pid(sock)
            assert pid is not None
            stop_spawned(sock)
            with anyio.fail_after(120):
                status = structured(await client.call_tool("memory_status", {}))
            assert status["daemon_pid"] not in (None, pid)

    try:
        run(go)
    finally:
        stop_spawned(sock)


def test_stdout_carries_only_the_protocol(store: Path, daemon: Daemon) -> None:
    lines = [
        *handshake_lines("t")[:2],
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "postgres"}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
    ]
    done = subprocess.run(
        [sys.executable, *bridge_args(store, daemon.socket_path)],
        input="".join(json.dumps(m) + "\n" for m in lines) + "not json\n",
        capture_output=True,
        text=True,
        env=bridge_env(),
        timeout=120,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, 3, None]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["result"]["isError"] is False
    assert answers[2]["error"]["code"] == -32601
    assert answers[3]["error"]["code"] == -32700
    assert done.returncode == 0


def test_daemon_search_carries_records_when_asked(store: Path, daemon: Daemon) -> None:
    """``search`` with ``records: true`` (the bridge's single round trip) gives each hit the
    record ``read`` gives; without it, hits stay the contract's five fields."""
    from headd_client.sync_client import Client

    with Client(daemon.socket_path) as c:
        plain = c.call("search", {"query": "postgres record", "limit": 3})
        full = c.call("search", {"query": "postgres record", "limit": 3, "records": True})
        assert [h["path"] for h in plain["hits"]] == [h["path"] for h in full["hits"]]
        assert all(set(h) == {"path", "score", "title", "claim", "arms"} for h in plain["hits"])
        for hit in full["hits"]:
            assert hit["record"] == c.call("read", {"path": hit["path"]})["record"]
