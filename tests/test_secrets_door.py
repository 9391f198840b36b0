"""The write door refuses credentials: every shape of the corpus, through every door (the
session manager, the wire, ``headctl``, the MCP bridge), lands nothing and names the kind and the
place, never the value; ordinary memories pass.

Mutation notes (each applied once, the named test seen red, then reverted):
- drop ``check_ops`` from ``SessionManager.apply`` -> every test here.
- drop ``check_commit`` from ``SessionManager.commit`` -> ``test_a_commit_message_with_a_secret``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from headd_client.sync_client import Client
from support.daemon import Daemon, headctl, short_socket_dir
from support.git import tip
from support.mcp import bridge, error_text, structured
from support.secret_corpus import ORDINARY, SECRETS
from support.stores import SEED_FILES, TickingClock, make_store

from headd.errors import HeaddError, SecretFound
from headd.ops import LinkOp, Put, Write
from headd.store.manager import SessionManager


def secret_values(text: str) -> list[str]:
    """The long runs of token characters in a corpus text: none may appear in any answer."""
    return [m for m in re.findall(r"[A-Za-z0-9_\-/+=.~]{12,}", text) if not m.isalpha()]


def assert_no_value(answer: str, text: str) -> None:
    for value in secret_values(text):
        assert value not in answer


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    make_store(root, SEED_FILES, ignore=None)
    return root


@pytest.mark.parametrize(("kind", "text"), SECRETS, ids=[k for k, _ in SECRETS])
def test_every_shape_in_every_field_is_refused(store: Path, kind: str, text: str) -> None:
    manager = SessionManager(store, clock=TickingClock())
    session = manager.open().session
    before = tip(store)
    fenced = f"```\n{text}\n```"
    attempts: list[tuple[Any, str]] = [
        (Write(title="Deploy notes", type="semantic", claim=text), "claim"),
        (
            Write(title="Deploy notes", type="semantic", claim="Notes.", body=["ok", fenced]),
            "body[1]",
        ),
        (Put(path="areas/inbox/notes.html", html=f"<article><p>{text}</p></article>"), "html"),
        (LinkOp(path="areas/inbox/notes.html", rel="relates_to", href="/" + text), "href"),
    ]
    for op, field in attempts:
        with pytest.raises(SecretFound) as caught:
            manager.apply(session, [Write(title="Fine", type="semantic", claim="Fine."), op])
        error = caught.value
        assert error.code == "ERR_SECRET"
        (finding,) = [f for f in error.details["findings"] if f["kind"] == kind]
        assert finding["op"] == 1 and finding["field"] == field
        assert finding["line"] >= 1 and finding["column"] >= 1
        assert kind in error.message
        assert_no_value(json.dumps(error.to_wire()), text)
    assert manager.info(session).ops == 0  # nothing of any batch was appended
    assert manager.commit(session).sha == before == tip(store)


def test_ordinary_memories_pass(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    session = manager.open().session
    ops = [
        Write(title=f"Ordinary {i}", type="semantic", claim=text) for i, text in enumerate(ORDINARY)
    ]
    applied = manager.apply(session, ops)
    assert not applied.violations and applied.ops == len(ORDINARY)
    assert manager.commit(session).outcome == "committed"


def test_a_commit_message_with_a_secret_is_refused(store: Path) -> None:
    manager = SessionManager(store, clock=TickingClock())
    session = manager.open().session
    manager.apply(session, [Write(title="Fine", type="semantic", claim="Fine.")])
    kind, text = SECRETS[2]
    before = tip(store)
    with pytest.raises(SecretFound) as caught:
        manager.commit(session, message=f"deploy\n\n{text}")
    assert caught.value.details["findings"][0]["field"] == "message"
    assert_no_value(caught.value.message, text)
    assert tip(store) == before and manager.info(session).ops == 1


@pytest.fixture
def daemon(store: Path):
    sock = short_socket_dir() / "h.sock"
    d = Daemon(store, sock, extra=["--embedder", "hash"]).wait_ready()
    yield d
    d.stop()


def test_the_wire_headctl_and_mcp_doors_refuse(store: Path, daemon: Daemon) -> None:
    before = tip(store)
    texts = [text for _, text in SECRETS]
    with Client(daemon.socket_path) as client:
        session = client.call("session.open")["session"]
        for kind, text in SECRETS:
            write = {"op": "write", "title": "T", "type": "semantic", "claim": text}
            with pytest.raises(HeaddError) as caught:
                client.call("session.apply", {"session": session, "ops": [write]})
            assert caught.value.code == "ERR_SECRET" and kind in caught.value.message
            assert_no_value(json.dumps(caught.value.details), text)

    cli = ["--store", str(store), "--socket", str(daemon.socket_path)]
    opened = headctl(*cli, "--json", "session", "open")
    session = json.loads(opened.stdout)["session"]
    for kind, text in SECRETS[:6]:
        ops = json.dumps([{"op": "write", "title": "T", "type": "semantic", "claim": text}])
        run = headctl(*cli, "session", "apply", session, stdin=ops)
        assert run.returncode == 1 and run.stderr.startswith("ERR_SECRET: ")
        assert kind in run.stderr
        assert_no_value(run.stdout + run.stderr, text)

    async def go() -> None:
        async with bridge(store, daemon.socket_path) as mcp:
            for kind, text in SECRETS[6:12]:
                result = await mcp.call_tool(
                    "memory_write",
                    {"title": "Leaky", "memory_type": "semantic", "body": f"Note. {text}"},
                )
                message = error_text(result)
                assert message.startswith("ERR_SECRET") and kind in message
                assert_no_value(message, text)
            fine = await mcp.call_tool(
                "memory_write",
                {"title": "Vault rule", "memory_type": "semantic", "body": ORDINARY[1]},
            )
            assert structured(fine)["created"]

    anyio.run(go)
    log = daemon.log()
    for text in texts:
        assert_no_value(log, text)
    assert tip(store) != before  # the ordinary write landed; no secret did
    from support.git import git

    history = git(store, "log", "-p", "--all")
    for text in texts:
        assert_no_value(history, text)
