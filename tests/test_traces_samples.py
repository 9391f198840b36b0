"""The real Claude Code samples (shared/data/traces) index to the values FORMAT.md derives."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import SHARED
from headd_plane.db import PlaneDb, open_reader, open_writer
from headd_plane.recorder import SessionLink, record_link
from headd_plane.traces import traces_index, traces_search, traces_show
from headd_plane.traces.discover import discover
from headd_plane.traces.reader import read_from

from headd.errors import SessionNotFound

SAMPLES = SHARED / "data" / "traces"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

S1 = "30499b10-b34f-4546-a431-c77d14d042e1"
S2 = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
S3 = "de3b8b19-5bc0-4a2a-934a-1b6806567e25"
S4 = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
S5 = "789e105f-ae33-486d-9271-0696266f072d"
S6 = "a4e5b271-6948-4581-893b-4595c9ec41ea"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A private copy, so the tree can be indexed like a live ~/.claude."""
    dest = tmp_path / "claude"
    shutil.copytree(SAMPLES / "projects", dest / "projects")
    return dest


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    yield db
    db.close()


def _row(db: PlaneDb, session_id: str) -> dict[str, object]:
    row = db.conn.execute("SELECT * FROM traces WHERE session_id = ?", (session_id,)).fetchone()
    assert row is not None, session_id
    return {k: row[k] for k in row.keys()}  # noqa: SIM118


def test_discovery_finds_every_layout(root: Path) -> None:
    found = discover(str(root))
    kinds = {(Path(f.path).name, f.kind, f.session_hint, f.agent_id) for f in found}
    assert len(found) == 9
    assert ("agent-aac57f5.jsonl", "subagent", S2, "aac57f5") in kinds
    assert ("agent-acompact-946d2b.jsonl", "subagent", S2, "acompact-946d2b") in kinds
    assert ("agent-af1ff21.jsonl", "flat_agent", None, "af1ff21") in kinds
    assert sum(f.kind == "session" for f in found) == 6
    assert sum(f.size for f in found) == 1_961_349


@pytest.mark.parametrize(
    ("relative", "session", "turns", "unknown", "first"),
    [
        (f"-fixture-project/{S1}.jsonl", S1, 36, 6, "This is a disposable fixture capture"),
        (
            f"-home-USER-projects-spotter-worktrees-spotter-4te/{S2}.jsonl",
            S2,
            422,
            1060,
            "Work on bead spotter-4te",
        ),
        (
            f"-home-USER-projects-spotter-worktrees-spotter-4te/{S2}/subagents/agent-aac57f5.jsonl",
            S2,
            28,
            12,
            "Search hex.pm for the latest versions",  # the agent's brief
        ),
        (
            f"-home-USER-projects-spotter-worktrees-spotter-4te/{S2}/subagents/"
            "agent-acompact-946d2b.jsonl",
            S2,
            2,
            0,
            "Your task is to create a detailed summary",
        ),
        (f"-tmp-tmp74wiyiny/{S3}.jsonl", S3, 8, 0, "Write a shell script called hello.sh"),
        (f"-workspace/{S4}.jsonl", S4, 53, 0, "can you run a command ls -la"),
        ("-workspace/agent-af1ff21.jsonl", S4, 2, 0, "Warmup"),
        (
            f"-Users-user-projects-happy-handy-cli-notes-test-project/{S5}.jsonl",
            "93a9705e-",
            6,
            1,
            "say lol",
        ),
        (f"-Users-user-Develop-slopus-happy-cli/{S6}.jsonl", S6, 13, 0, "Show me a sample"),
    ],
)
def test_each_file_extracts_format_md_values(
    relative: str, session: str, turns: int, unknown: int, first: str
) -> None:
    path = SAMPLES / "projects" / relative
    result = read_from(path, 0, path.stat().st_size)
    ex = result.extract
    assert result.consumed == path.stat().st_size
    assert ex.session_id is not None and ex.session_id.startswith(session)
    assert ex.turn_count == turns
    assert ex.counters.unknown_type == unknown
    assert ex.counters.bad == 0
    assert ex.first_prompt.startswith(first)
    # promptId exists only in the 2.1.258 sample: 2 distinct ids over 7 user records.
    assert len(ex.id_prompts) == (2 if session == S1 else 0)


def test_the_tree_indexes_into_six_sessions(root: Path, plane: PlaneDb) -> None:
    report = traces_index(plane.conn, root, NOW)
    assert report["files_seen"] == 9
    assert report["files_read"] == 9
    assert report["files_skipped"] == 0
    assert report["bytes_read"] == 1_961_349
    assert report["sessions"] == 6
    assert report["bad_lines"] == 0

    s1 = _row(plane, S1)
    assert (s1["prompt_count"], s1["turn_count"], s1["agent_count"]) == (2, 36, 0)
    assert (s1["git_branch"], s1["entrypoint"], s1["cwd"]) == ("HEAD", "sdk-ts", "/fixture/project")
    assert s1["version"] == "2.1.258"
    assert s1["slug"] == "-fixture-project"

    s2 = _row(plane, S2)
    assert s2["agent_count"] == 2  # aac57f5 and acompact-946d2b
    assert s2["model"] == "claude-haiku-4-5-20251001"
    assert s2["turn_count"] == 422
    assert str(s2["file_path"]).endswith(f"{S2}.jsonl")  # the main file, never a sidecar
    assert str(s2["first_prompt"]).startswith("Work on bead spotter-4te")
    # Old format: no promptId; the two typed prompts, not tool results, meta or the summary.
    assert s2["prompt_count"] == 2

    s3 = _row(plane, S3)
    assert s3["git_branch"] is None  # gitBranch "" is absent
    assert s3["prompt_count"] == 1  # the isMeta stop-hook feedback is not a prompt
    s4 = _row(plane, S4)
    assert s4["git_branch"] is None
    assert (s4["agent_count"], s4["turn_count"]) == (1, 53)  # the flat agent file joins it
    assert s4["prompt_count"] == 5  # /compact, caveats, summaries and tool results excluded

    s5 = _row(plane, S5)  # keyed by its file name; its first record names the continued session
    assert (s5["turn_count"], s5["first_prompt"], s5["prompt_count"]) == (6, "say lol", 2)
    s6 = _row(plane, S6)
    assert (s6["turn_count"], s6["prompt_count"], s6["agent_count"]) == (13, 1, 0)

    for row in (s1, s2, s3, s4, s5, s6):
        assert str(row["started_at"]) <= str(row["ended_at"])
        assert str(row["started_at"]).endswith("Z") and len(str(row["started_at"])) == 24


def test_prompt_rows_hold_ids_heads_and_order(root: Path, plane: PlaneDb) -> None:
    traces_index(plane.conn, root, NOW)
    rows = plane.conn.execute(
        "SELECT ordinal, prompt_id, text_head, agent_id FROM trace_prompts"
        " WHERE session_id = ? ORDER BY ordinal",
        (S1,),
    ).fetchall()
    assert [r[0] for r in rows] == [0, 1]
    assert rows[0][2].startswith("This is a disposable fixture capture")
    assert rows[1][2].startswith("Read claude-result.txt again")
    assert all(len(r[2]) <= 200 and r[3] is None for r in rows)
    heads = [
        r[0]
        for r in plane.conn.execute(
            "SELECT text_head FROM trace_prompts WHERE session_id = ? ORDER BY ordinal", (S2,)
        )
    ]
    assert heads[1] == "continue implementation"


def test_a_second_scan_reads_nothing(root: Path, plane: PlaneDb) -> None:
    traces_index(plane.conn, root, NOW)
    before = [tuple(r) for r in plane.conn.execute("SELECT * FROM traces ORDER BY session_id")]
    report = traces_index(plane.conn, root, NOW)
    assert (report["files_read"], report["files_skipped"], report["bytes_read"]) == (0, 9, 0)
    after = [tuple(r) for r in plane.conn.execute("SELECT * FROM traces ORDER BY session_id")]
    assert after == before


def test_search_and_show(root: Path, plane: PlaneDb) -> None:
    traces_index(plane.conn, root, NOW)
    hits = traces_search(plane.conn, "hello.sh shell script", 5)["hits"]
    assert hits[0]["session_id"] == S3
    assert set(hits[0]) == {
        "session_id",
        "slug",
        "cwd",
        "first_prompt",
        "ai_title",
        "started_at",
        "ended_at",
        "prompt_count",
    }
    # Terms no session holds together fall back to any term.
    assert {h["session_id"] for h in traces_search(plane.conn, "hello.sh spotter")["hits"]} == {
        S2,
        S3,
    }
    assert traces_search(plane.conn, "zzzzqqq")["hits"] == []
    # FTS syntax in the query is not an error.
    assert traces_search(plane.conn, 'AND "can\'t" -- spotter-4te*')["hits"][0]["session_id"] == S2
    assert len(traces_search(plane.conn, "", 3)["hits"]) == 3

    record_link(plane.conn, SessionLink("areas/x.html", S3, "wrote", "2026-01-21T06:21:00.000Z"))
    shown = traces_show(plane.conn, S3[:8])
    assert shown["session_id"] == S3
    assert [p["ordinal"] for p in shown["prompts"]] == [0]
    assert shown["memories"] == [
        {
            "path": "areas/x.html",
            "link_kind": "wrote",
            "prompt_id": None,
            "turn_uuid": None,
            "at": "2026-01-21T06:21:00.000Z",
        }
    ]
    assert shown["missing"] is False
    assert [f["kind"] for f in traces_show(plane.conn, S2)["files"]] == [
        "session",
        "subagent",
        "subagent",
    ]
    with pytest.raises(SessionNotFound):
        traces_show(plane.conn, "no-such-session")


def test_a_read_only_connection_can_search_and_show(root: Path, tmp_path: Path) -> None:
    writer = open_writer(tmp_path / "ro" / "index.db", None)
    try:
        traces_index(writer.conn, root, NOW)
    finally:
        writer.close()
    reader = open_reader(tmp_path / "ro" / "index.db")
    try:
        assert traces_search(reader.conn, "hello.sh")["hits"][0]["session_id"] == S3
        assert traces_show(reader.conn, S4)["agent_count"] == 1
    finally:
        reader.close()


def test_an_index_written_by_memhtml_is_read_and_rescanned(root: Path, tmp_path: Path) -> None:
    """A store's index.db from memhtml 0.15.1 (its own trace tables, no headd state) works."""
    import shutil as _shutil

    from conftest import ANCHOR

    target = tmp_path / "mem" / "index.db"
    target.parent.mkdir()
    _shutil.copyfile(ANCHOR / "index.db", target)
    db = open_writer(target, None)  # every migration is already in its ledger
    try:
        assert db.migrations_applied == 12
        report = traces_index(db.conn, root, NOW)
        assert (report["files_read"], report["sessions"]) == (9, 6)
        assert _row(db, S2)["agent_count"] == 2
    finally:
        db.close()
