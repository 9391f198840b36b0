"""``headctl integrations`` on a temporary HOME, and ``headctl hook`` with sample payloads.

The files written must parse as each client's own format (JSON for Claude Code and Cursor, TOML
for Codex), install twice must write the same bytes, uninstall must leave every file as it was
before install (the receipt's digests say what is ours), and ``--dry-run`` writes nothing.
Hooks run as real processes against a real daemon, against no daemon, and against a socket that
accepts and never answers: the last two must print nothing and exit 0.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from support.daemon import Daemon, short_socket_dir
from support.data import REPO
from support.stores import make_store


def headctl(
    home: Path, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("HEADD_SOCKET", None)
    return subprocess.run(
        [sys.executable, "-m", "headd_client.headctl", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        cwd=str(cwd),
        timeout=120,
    )


def snapshot(root: Path) -> dict[str, object]:
    """Every file under ``root``: JSON documents by value (we rewrite them indented), the rest
    byte for byte."""
    return {
        str(p.relative_to(root)): json.loads(p.read_bytes())
        if p.suffix == ".json"
        else p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".config" not in p.parts
    }


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    store = tmp_path / "store"
    for d in (home, project, store):
        d.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    make_store(store)
    return home, project, store


def _parse(path: Path) -> object:
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text(encoding="utf-8"))
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("client", ["claude", "codex", "cursor"])
@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_parses_is_idempotent_and_uninstall_round_trips(
    places: tuple[Path, Path, Path], client: str, scope: str
) -> None:
    home, project, store = places
    # a config the person already had: our fragments go beside it and leave it intact
    (home / ".claude.json").write_text(
        json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "x"}}}) + "\n"
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "o3"\n')
    before = {"home": snapshot(home), "project": snapshot(project)}
    common = ["--store", str(store), "integrations", "install", client, "--scope", scope]

    dry = headctl(home, project, *common, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "created" in dry.stdout or "updated" in dry.stdout
    assert {"home": snapshot(home), "project": snapshot(project)} == before

    first = headctl(home, project, "--json", *common)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    written = {Path(e["path"]): e["role"] for e in report["entries"]}
    assert "mcp-entry" in written.values()
    for path in written:
        _parse(path)  # raises if the file is not that client's format
    entry_file = next(p for p, role in written.items() if role == "mcp-entry")
    parsed = _parse(entry_file)
    servers = parsed["mcp_servers"] if client == "codex" else parsed["mcpServers"]  # type: ignore[index]
    assert servers["headd"]["args"][-3:] == ["--store", str(store), "mcp"]
    if client == "claude":
        settings = _parse(next(p for p, role in written.items() if role == "hooks"))
        events = set(settings["hooks"])  # type: ignore[index]
        assert events == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
        command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]  # type: ignore[index]
        assert command.endswith("hook prompt-submit")
    if entry_file == home / ".claude.json":
        assert parsed["theme"] == "dark" and "other" in parsed["mcpServers"]  # type: ignore[index]
    if entry_file == home / ".codex" / "config.toml":
        assert parsed["model"] == "o3"  # type: ignore[index]

    installed = {"home": snapshot(home), "project": snapshot(project)}
    second = headctl(home, project, *common)
    assert second.returncode == 0
    assert {"home": snapshot(home), "project": snapshot(project)} == installed
    assert set(second.stdout.split()) >= {"unchanged:"}

    gone = headctl(
        home, project, "--store", str(store), "integrations", "uninstall", client, "--scope", scope
    )
    assert gone.returncode == 0, gone.stderr
    assert {"home": snapshot(home), "project": snapshot(project)} == before


def test_uninstall_keeps_a_fragment_edited_since_install(places: tuple[Path, Path, Path]) -> None:
    home, project, store = places
    assert (
        headctl(
            home, project, "--store", str(store), "integrations", "install", "cursor"
        ).returncode
        == 0
    )
    mcp_json = home / ".cursor" / "mcp.json"
    doc = json.loads(mcp_json.read_text())
    doc["mcpServers"]["headd"]["args"].append("--no-spawn")
    mcp_json.write_text(json.dumps(doc))
    done = headctl(home, project, "--store", str(store), "integrations", "uninstall", "cursor")
    assert "kept-modified" in done.stdout
    assert json.loads(mcp_json.read_text()) == doc


def test_doctor_reports_each_piece_and_the_mcp_server(places: tuple[Path, Path, Path]) -> None:
    home, project, store = places
    assert (
        headctl(
            home, project, "--store", str(store), "integrations", "install", "claude"
        ).returncode
        == 0
    )
    ok = headctl(home, project, "--store", str(store), "--json", "integrations", "doctor", "claude")
    report = json.loads(ok.stdout)
    names = {c["name"]: c["ok"] for c in report["checks"]}
    assert names["claude:user:mcp-entry"] and names["claude:user:hooks"]
    assert names["claude:user:instruction-block"] and names["claude:user:mcp"]
    assert ok.returncode == 0, report
    (home / ".claude" / "CLAUDE.md").write_text("replaced\n")
    broken = headctl(
        home, project, "--store", str(store), "--json", "integrations", "doctor", "claude"
    )
    assert broken.returncode == 1
    assert {c["name"]: c["ok"] for c in json.loads(broken.stdout)["checks"]}[
        "claude:user:instruction-block"
    ] is False


# -- hooks -----------------------------------------------------------------------------------

PROMPT = {
    "session_id": "0b6f5d2e-1111-4222-8333-444455556666",
    "transcript_path": "/nonexistent/.claude/projects/-work-shop/0b6f5d2e.jsonl",
    "cwd": "/home/dana/postgres-orders",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "Which database is the system of record for orders?",
}


def hook(
    store: Path, sock: Path, event: str, payload: object, home: Path
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return headctl(
        home, REPO, "--store", str(store), "--socket", str(sock), "hook", event, stdin=text
    )


def test_recall_hooks_print_a_block_with_the_daemon_up(places: tuple[Path, Path, Path]) -> None:
    home, _, store = places
    sock = short_socket_dir() / "h.sock"
    daemon = Daemon(store, sock).wait_ready()
    try:
        head_before = subprocess.run(
            ["git", "-C", str(store), "rev-parse", "main"], capture_output=True, text=True
        ).stdout
        asked = hook(store, sock, "prompt-submit", PROMPT, home)
        assert asked.returncode == 0
        assert "areas/inbox/postgres-is-the-system-of-record.html" in asked.stdout
        assert asked.stdout.startswith('<memory-recall source="headd">')
        started = hook(
            store, sock, "session-start", {**PROMPT, "hook_event_name": "SessionStart"}, home
        )
        assert started.returncode == 0 and "postgres-is-the-system-of-record" in started.stdout
        for event in ("pre-compact", "session-end"):
            indexed = hook(store, sock, event, PROMPT, home)
            assert indexed.returncode == 0 and indexed.stdout == ""
        head_after = subprocess.run(
            ["git", "-C", str(store), "rev-parse", "main"], capture_output=True, text=True
        ).stdout
        assert head_after == head_before  # hooks never write memories
    finally:
        daemon.stop()


def test_prompt_hook_injects_only_what_clears_the_relevance_floor(
    places: tuple[Path, Path, Path],
) -> None:
    """Trivial and unrelated prompts inject nothing; a related one still injects its memory."""
    home, _, store = places
    sock = short_socket_dir() / "h.sock"
    daemon = Daemon(store, sock).wait_ready()
    try:
        for prompt in (
            "ok",
            "train",
            "write a short haiku about cats",
            "make the search button blue",
            "is this answer right?",
        ):
            quiet = hook(store, sock, "prompt-submit", {**PROMPT, "prompt": prompt}, home)
            assert quiet.returncode == 0 and quiet.stdout == "", (prompt, quiet.stdout)
        asked = hook(store, sock, "prompt-submit", PROMPT, home)
        assert "areas/inbox/postgres-is-the-system-of-record.html" in asked.stdout
    finally:
        daemon.stop()


@pytest.mark.parametrize("event", ["session-start", "prompt-submit", "pre-compact", "session-end"])
def test_hooks_are_silent_and_exit_zero_when_the_daemon_is_down(
    places: tuple[Path, Path, Path], event: str
) -> None:
    home, _, store = places
    sock = short_socket_dir() / "none.sock"
    for payload in (PROMPT, "not json", ""):
        done = hook(store, sock, event, payload, home)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_recall_hook_gives_up_silently_on_a_daemon_that_never_answers(
    places: tuple[Path, Path, Path],
) -> None:
    home, _, store = places
    sock = short_socket_dir() / "mute.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    listener.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)  # read nothing, answer nothing
        except OSError:
            return

    threading.Thread(target=accept, daemon=True).start()
    try:
        done = hook(store, sock, "prompt-submit", PROMPT, home)
        assert (done.returncode, done.stdout) == (0, "")
        assert accepted, "the hook never connected"
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def _headd_hooks(settings: Path) -> list[str]:
    from headd_client.integrations.pieces import is_headd_hook_group

    if not settings.exists():
        return []
    hooks = json.loads(settings.read_text(encoding="utf-8")).get("hooks") or {}
    return [
        h["command"]
        for groups in hooks.values()
        for g in groups
        if is_headd_hook_group(g)
        for h in g["hooks"]
    ]


def test_one_install_owns_one_set_of_hooks(places: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """A re-install for another store replaces the first store's hooks; doctor flags stray and
    duplicate headd hooks and a store that is gone; uninstall removes every headd hook."""
    home, project, store = places
    other = tmp_path / "other-store"
    other.mkdir()
    make_store(other)
    settings = home / ".claude" / "settings.json"
    for target in (store, other):
        done = headctl(home, project, "--store", str(target), "integrations", "install", "claude")
        assert done.returncode == 0, done.stderr
    commands = _headd_hooks(settings)
    assert len(commands) == 4 and all(str(other) in c for c in commands), commands
    healthy = headctl(home, project, "--json", "integrations", "doctor", "claude")
    assert healthy.returncode == 0, healthy.stdout

    # a stray an older install left (the first store's prompt hook, by hand)
    doc = json.loads(settings.read_text(encoding="utf-8"))
    stray = json.loads(json.dumps(doc["hooks"]["UserPromptSubmit"][-1]))
    stray["hooks"][0]["command"] = stray["hooks"][0]["command"].replace(str(other), str(store))
    doc["hooks"]["UserPromptSubmit"].append(stray)
    doc["hooks"]["UserPromptSubmit"].insert(0, {"hooks": [{"type": "command", "command": "x"}]})
    settings.write_text(json.dumps(doc), encoding="utf-8")
    flagged = headctl(home, project, "--json", "integrations", "doctor", "claude")
    checks = {c["name"]: c for c in json.loads(flagged.stdout)["checks"]}
    assert flagged.returncode == 1
    assert checks["claude:user:stray-hooks"]["ok"] is False
    assert str(store) in checks["claude:user:stray-hooks"]["detail"]

    gone = headctl(home, project, "integrations", "uninstall", "claude")
    assert gone.returncode == 0, gone.stderr
    assert _headd_hooks(settings) == []
    kept = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"]
    assert kept == [{"hooks": [{"type": "command", "command": "x"}]}]  # the person's own hook

    assert headctl(home, project, "--store", str(other), "integrations", "install", "claude")
    import shutil

    shutil.rmtree(other)
    lost = headctl(home, project, "--json", "integrations", "doctor", "claude")
    store_check = {c["name"]: c for c in json.loads(lost.stdout)["checks"]}["claude:user:store"]
    assert lost.returncode == 1 and store_check["ok"] is False
    assert "no store at" in store_check["detail"]


def test_project_scope_warns_of_machine_paths(places: tuple[Path, Path, Path]) -> None:
    home, project, store = places
    done = headctl(
        home,
        project,
        "--store",
        str(store),
        "integrations",
        "install",
        "claude",
        "--scope",
        "project",
    )
    assert done.returncode == 0 and "warning:" in done.stderr and "absolute paths" in done.stderr
