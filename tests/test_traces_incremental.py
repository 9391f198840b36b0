"""Incremental transcript scanning on a live-like tree: appends, rewrites, partial lines,
late subagent files, deletions, malformed lines, and the invariant that scanning a file in
pieces ends where scanning it once does."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from headd_plane.db import PlaneDb, open_writer
from headd_plane.traces import default_trace_root, traces_index, traces_search, traces_show
from headd_plane.traces.store import iso_to_ms, ms_to_iso
from headd_plane.traces.watermark import Plan, Watermark, advance, plan_read
from hypothesis import given, settings
from hypothesis import strategies as st

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SID = "11111111-2222-4333-8444-555555555555"
SLUG = "-home-user-proj"
T0 = 1_780_000_000_000  # epoch ms used for file mtimes


def ts(second: int) -> str:
    return f"2026-08-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def user(uuid: str, text: str, second: int, **extra: Any) -> str:
    record = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": extra.pop("sessionId", SID),
        "timestamp": ts(second),
        "cwd": "/home/user/proj",
        "gitBranch": "main",
        "version": "2.1.40",
        "message": {"role": "user", "content": text},
    }
    record.update(extra)
    return json.dumps(record)


def tool_result(uuid: str, second: int, **extra: Any) -> str:
    record = {
        "type": "user",
        "uuid": uuid,
        "sessionId": extra.pop("sessionId", SID),
        "timestamp": ts(second),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
        "toolUseResult": {"stdout": "ok"},
    }
    record.update(extra)
    return json.dumps(record)


def assistant(uuid: str, second: int, model: str = "claude-opus-4-6", **extra: Any) -> str:
    record = {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": extra.pop("sessionId", SID),
        "timestamp": ts(second),
        "message": {"model": model, "role": "assistant", "content": [{"type": "text"}]},
    }
    record.update(extra)
    return json.dumps(record)


class Tree:
    """A ~/.claude-like root whose files the test writes with explicit mtimes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = T0

    def path(self, relative: str) -> Path:
        return self.root / "projects" / SLUG / relative

    def _touch(self, p: Path, mtime_ms: int | None) -> None:
        self.clock += 1000
        stamp = self.clock if mtime_ms is None else mtime_ms
        os.utime(p, ns=(stamp * 1_000_000, stamp * 1_000_000))

    def write(self, relative: str, data: str, mtime_ms: int | None = None) -> Path:
        p = self.path(relative)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode())
        self._touch(p, mtime_ms)
        return p

    def append(self, relative: str, data: str) -> Path:
        p = self.path(relative)
        with open(p, "ab") as fh:
            fh.write(data.encode())
        self._touch(p, None)
        return p


def lines(*records: str) -> str:
    return "".join(r + "\n" for r in records)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path / "claude")


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    yield db
    db.close()


def row(db: PlaneDb, session_id: str = SID) -> dict[str, Any]:
    r = db.conn.execute("SELECT * FROM traces WHERE session_id = ?", (session_id,)).fetchone()
    assert r is not None
    out = {k: r[k] for k in r.keys()}  # noqa: SIM118
    out.pop("indexed_at")
    return out


def prompts(db: PlaneDb, session_id: str = SID) -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in db.conn.execute(
            "SELECT ordinal, prompt_id, turn_uuid, at, agent_id, text_head FROM trace_prompts"
            " WHERE session_id = ? ORDER BY ordinal",
            (session_id,),
        )
    ]


def test_an_appended_file_is_read_from_its_offset_and_merged(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    first = lines(user("u1", "first question about lexers", 1), assistant("a1", 2))
    tree.write(main, first)
    traces_index(plane.conn, tree.root, NOW)
    extra = lines(
        tool_result("u2", 3),
        user("u3", "second question", 4),
        assistant("a2", 5, model="claude-haiku-4-5"),
    )
    tree.append(main, extra)
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["files_read"], report["tailed"], report["rescanned"]) == (1, 1, 0)
    assert report["bytes_read"] == len(extra.encode())
    r = row(plane)
    assert (r["turn_count"], r["prompt_count"]) == (5, 2)
    assert r["first_prompt"] == "first question about lexers"
    assert (r["started_at"], r["ended_at"]) == (ts(1), ts(5))
    assert r["file_size"] == len((first + extra).encode())
    assert [p[0] for p in prompts(plane)] == [0, 1]
    assert [p[5] for p in prompts(plane)] == ["first question about lexers", "second question"]


def test_a_prompt_straddling_the_boundary_counts_once(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    # promptId era: a tool_result of prompt P arrives before P's typed record.
    tree.write(main, lines(tool_result("u1", 1, promptId="P"), assistant("a1", 2)))
    traces_index(plane.conn, tree.root, NOW)
    assert prompts(plane)[0][5] == ""
    tree.append(main, lines(user("u2", "the typed text of P", 3, promptId="P")))
    traces_index(plane.conn, tree.root, NOW)
    assert prompts(plane) == [(0, "P", "u1", ts(1), None, "the typed text of P")]
    assert row(plane)["prompt_count"] == 1


def test_a_same_size_rewrite_with_a_new_mtime_is_read_again(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    tree.write(main, lines(user("u1", "alpha alpha", 1), assistant("a1", 2)), mtime_ms=T0)
    traces_index(plane.conn, tree.root, NOW)
    rewritten = lines(user("u1", "omega omega", 1), assistant("a1", 2))
    # Same size, same mtime: by the watermark's rule the file is unchanged and not opened.
    tree.write(main, rewritten, mtime_ms=T0)
    assert traces_index(plane.conn, tree.root, NOW)["files_skipped"] == 1
    assert row(plane)["first_prompt"] == "alpha alpha"
    # Same size, mtime moved: reread from 0 and replaced, not added.
    tree.write(main, rewritten, mtime_ms=T0 + 5)
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["rescanned"], report["tailed"]) == (1, 0)
    r = row(plane)
    assert (r["first_prompt"], r["turn_count"], r["prompt_count"]) == ("omega omega", 2, 1)
    assert traces_search(plane.conn, "omega").hits[0].session_id == SID
    assert traces_search(plane.conn, "alpha").hits == []


def test_a_truncated_last_line_is_completed_by_the_next_scan(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    whole = lines(user("u1", "hello there", 1), assistant("a1", 2))
    third = user("u2", "a prompt still being written", 3)
    cut = len(third) // 2
    tree.write(main, whole + third[:cut])
    report = traces_index(plane.conn, tree.root, NOW)
    assert report["bytes_read"] == len(whole.encode())
    assert report["bad_lines"] == 0
    assert row(plane)["turn_count"] == 2
    off = plane.conn.execute("SELECT byte_off, size FROM trace_watermarks").fetchone()
    assert tuple(off) == (len(whole.encode()), len((whole + third[:cut]).encode()))

    tree.append(main, third[cut:] + "\n")
    report = traces_index(plane.conn, tree.root, NOW)
    assert report["bytes_read"] == len((third + "\n").encode())
    assert (report["tailed"], report["bad_lines"]) == (1, 0)
    r = row(plane)
    assert (r["turn_count"], r["prompt_count"]) == (3, 2)
    assert prompts(plane)[1][5] == "a prompt still being written"


def test_a_subagent_file_arriving_after_its_session_joins_it(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    tree.write(main, lines(user("u1", "delegate the search", 1), assistant("a1", 2)))
    traces_index(plane.conn, tree.root, NOW)
    before = row(plane)
    assert before["agent_count"] == 0

    side = lines(
        user("s1", "brief: search the web", 30, agentId="a77", isSidechain=True),
        assistant("s2", 40, agentId="a77", isSidechain=True),
    )
    tree.write(f"{SID}/subagents/agent-a77.jsonl", side)
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["files_read"], report["files_skipped"], report["sessions"]) == (1, 1, 1)
    after = row(plane)
    assert after["agent_count"] == 1
    assert after["ended_at"] == ts(40)
    # The main transcript keeps the identity, the first prompt and its own turn count.
    for key in ("first_prompt", "turn_count", "file_path", "file_size", "cwd", "prompt_count"):
        assert after[key] == before[key], key
    # A flat (pre-2.1) agent file of the same session joins it too.
    tree.write("agent-b88.jsonl", lines(user("f1", "Warmup", 50, agentId="b88", isSidechain=True)))
    traces_index(plane.conn, tree.root, NOW)
    assert row(plane)["agent_count"] == 2
    kinds = [f.kind for f in traces_show(plane.conn, SID).files]
    assert kinds == ["session", "subagent", "flat_agent"]  # main first, then by path


def test_rescanning_one_sidecar_does_not_count_it_twice(tree: Tree, plane: PlaneDb) -> None:
    tree.write(f"{SID}.jsonl", lines(user("u1", "go", 1), assistant("a1", 2)))
    side = lines(
        user("s1", "brief", 3, agentId="x1", isSidechain=True, promptId="SP"),
        assistant("s2", 4, agentId="x1"),
    )
    tree.write(f"{SID}/subagents/agent-x1.jsonl", side)
    traces_index(plane.conn, tree.root, NOW)
    before, before_prompts = row(plane), prompts(plane)
    tree.write(f"{SID}/subagents/agent-x1.jsonl", side)  # same bytes, new mtime: a rescan
    assert traces_index(plane.conn, tree.root, NOW)["rescanned"] == 1
    assert row(plane) == before
    assert prompts(plane) == before_prompts
    assert before_prompts[-1][1:5:3] == ("SP", "x1")


def test_a_deleted_transcript_keeps_its_row_marked(tree: Tree, plane: PlaneDb) -> None:
    p = tree.write(f"{SID}.jsonl", lines(user("u1", "remember the migration plan", 1)))
    traces_index(plane.conn, tree.root, NOW)
    data, stat = p.read_bytes(), p.stat()
    p.unlink()
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["files_seen"], report["files_missing"]) == (0, 1)
    assert row(plane)["first_prompt"] == "remember the migration plan"
    shown = traces_show(plane.conn, SID)
    assert shown.missing is True
    assert shown.files[0].missing_at == "2026-11-30T12:00:00.000Z"
    assert traces_search(plane.conn, "migration").hits[0].session_id == SID
    assert traces_index(plane.conn, tree.root, NOW)["files_missing"] == 0  # marked once
    # Restored unchanged (same size and mtime): not reread, and no longer missing.
    p.write_bytes(data)
    os.utime(p, ns=(stat.st_mtime_ns, stat.st_mtime_ns))
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["files_read"], report["files_skipped"]) == (0, 1)
    assert traces_show(plane.conn, SID).missing is False


def test_a_shrunk_file_is_read_again(tree: Tree, plane: PlaneDb) -> None:
    main = f"{SID}.jsonl"
    two = lines(user("u1", "one", 1), assistant("a1", 2))
    tree.write(main, two + lines(user("u2", "two", 3), assistant("a2", 4)))
    traces_index(plane.conn, tree.root, NOW)
    assert row(plane)["turn_count"] == 4
    tree.write(main, two)
    report = traces_index(plane.conn, tree.root, NOW)
    assert report["rescanned"] == 1
    r = row(plane)
    assert (r["turn_count"], r["prompt_count"], r["ended_at"]) == (2, 1, ts(2))


def test_malformed_lines_are_counted_and_unknown_types_ignored(tree: Tree, plane: PlaneDb) -> None:
    body = (
        lines(user("u1", "real prompt", 1))
        + "this is not json\n"
        + "[1, 2, 3]\n"
        + '{"type": 5}\n'
        + "\n   \n"
        + json.dumps({"type": "progress", "uuid": "p1", "sessionId": SID, "data": {}})
        + "\n"
        + '{"type":"file-history-snapshot","messageId":"m","snapshot":{}}\n'
        + '{"type":"user","uuid":"nosession","message":{"content":"x"}}\n'
        + lines(
            user("u2", "<command-name>/compact</command-name>", 2),
            user("u3", "caveat", 3, isMeta=True),
            user("u4", "summary of the conversation", 4, isCompactSummary=True),
            tool_result("u5", 5),
            assistant("a1", 6, model="<synthetic>"),
        )
    )
    tree.write(f"{SID}.jsonl", body)
    report = traces_index(plane.conn, tree.root, NOW)
    assert report["bad_lines"] == 3
    r = row(plane)
    assert r["turn_count"] == 6  # u1..u5 and a1; progress is unknown, snapshot skipped
    assert r["prompt_count"] == 1  # only the typed prompt
    assert r["model"] is None  # <synthetic> is not a model
    files = traces_show(plane.conn, SID).files
    assert (files[0].bad_lines, files[0].unknown_lines) == (3, 1)


def test_the_trace_root_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(tmp_path / "env"))
    assert default_trace_root("/explicit") == Path("/explicit")
    assert default_trace_root() == tmp_path / "env"
    monkeypatch.delenv("MEMHTML_TRACE_ROOT")
    assert default_trace_root() == Path("~/.claude").expanduser()


def test_an_empty_or_absent_root_is_an_empty_scan(tmp_path: Path, plane: PlaneDb) -> None:
    report = traces_index(plane.conn, tmp_path / "nothing-here", NOW)
    assert (report["files_seen"], report["sessions"]) == (0, 0)


@pytest.mark.parametrize(
    ("prev", "size", "mtime", "expected"),
    [
        (None, 10, 5, Plan("rescan", 0)),
        (Watermark(10, 5, 10), 10, 5, Plan("skip", 10)),
        (Watermark(10, 5, 8), 20, 6, Plan("tail", 8)),
        (Watermark(10, 5, 10), 20, 5, Plan("tail", 10)),  # grew within one mtime tick
        (Watermark(10, 5, 10), 9, 6, Plan("rescan", 0)),  # shrank
        (Watermark(10, 5, 10), 20, 4, Plan("rescan", 0)),  # mtime went backwards
        (Watermark(10, 5, 10), 10, 6, Plan("rescan", 0)),  # same size, touched
        (Watermark(30, 5, 30), 30, 6, Plan("rescan", 0)),
        (Watermark(10, 5, 40), 20, 6, Plan("rescan", 0)),  # offset past the end
    ],
)
def test_the_watermark_plan(prev: Watermark | None, size: int, mtime: int, expected: Plan) -> None:
    assert plan_read(prev, size, mtime) == expected


def test_advance_never_passes_the_stat_size() -> None:
    assert advance(100, 7, 40, 80) == Watermark(100, 7, 100)
    assert advance(100, 7, 40, 30) == Watermark(100, 7, 70)


_RECORDS = st.lists(
    st.one_of(
        st.builds(
            lambda s, t: ("user", s, t),
            st.sampled_from(["ask", "fix it", "why"]),
            st.integers(0, 50),
        ),
        st.builds(
            lambda m, t: ("assistant", m, t), st.sampled_from(["m-a", "m-b"]), st.integers(0, 50)
        ),
        st.builds(
            lambda p, t: ("prompt", p, t), st.sampled_from(["P1", "P2", "P3"]), st.integers(0, 50)
        ),
        st.builds(
            lambda p, t: ("tool", p, t), st.sampled_from(["P1", "P2", None]), st.integers(0, 50)
        ),
        st.just(("garbage", "", 0)),
    ),
    min_size=1,
    max_size=14,
)


def _render(records: list[tuple[str, Any, int]]) -> str:
    out = []
    for i, (kind, value, second) in enumerate(records):
        uuid = f"r{i}"
        if kind == "user":
            out.append(user(uuid, f"{value} {i}", second))
        elif kind == "assistant":
            out.append(assistant(uuid, second, model=value))
        elif kind == "prompt":
            out.append(user(uuid, f"typed {value}", second, promptId=value))
        elif kind == "tool":
            out.append(tool_result(uuid, second, **({"promptId": value} if value else {})))
        else:
            out.append('{"broken": ')
    return lines(*out)


_TEMPLATE: list[Path] = []


def _fresh_db(dest: Path) -> PlaneDb:
    """A migrated index.db, copied from one made once (migrating per example is the slow part)."""
    if not _TEMPLATE:
        template = Path(tempfile.mkdtemp()) / "template.db"
        open_writer(template, None).close()
        _TEMPLATE.append(template)
    shutil.copyfile(_TEMPLATE[0], dest)
    return open_writer(dest, None)


@settings(max_examples=15, deadline=None)
@given(_RECORDS, st.lists(st.integers(0, 10_000), max_size=4), st.booleans())
def test_scanning_in_pieces_ends_where_one_scan_does(
    records: list[tuple[str, Any, int]], cuts: list[int], with_sidecar: bool
) -> None:
    data = _render(records).encode()
    points = sorted({c % (len(data) + 1) for c in cuts} | {len(data)})
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        piecewise, whole = Tree(base / "a"), Tree(base / "b")
        db_a, db_b = _fresh_db(base / "a.db"), _fresh_db(base / "b.db")
        try:
            start = 0
            for point in points:
                if start == 0:
                    piecewise.write(f"{SID}.jsonl", data[:point].decode(errors="ignore"))
                else:
                    p = piecewise.path(f"{SID}.jsonl")
                    with open(p, "ab") as fh:
                        fh.write(data[start:point])
                    piecewise._touch(p, None)
                start = point
                traces_index(db_a.conn, piecewise.root, NOW)
                if with_sidecar and point == points[0]:
                    # A subagent file arriving after the first scan of its session.
                    side = lines(user("s1", "sub brief", 9, agentId="z9", isSidechain=True))
                    piecewise.write(f"{SID}/subagents/agent-z9.jsonl", side)
                    whole.write(f"{SID}/subagents/agent-z9.jsonl", side)
            traces_index(db_a.conn, piecewise.root, NOW)
            whole.write(f"{SID}.jsonl", data.decode())
            traces_index(db_b.conn, whole.root, NOW)
            strip = {"file_path", "file_mtime"}
            ra = db_a.conn.execute("SELECT * FROM traces").fetchall()
            rb = db_b.conn.execute("SELECT * FROM traces").fetchall()
            assert [{k: r[k] for k in r.keys() if k not in strip} for r in ra] == [  # noqa: SIM118
                {k: r[k] for k in r.keys() if k not in strip}  # noqa: SIM118
                for r in rb
            ]
            pa = db_a.conn.execute("SELECT * FROM trace_prompts ORDER BY ordinal").fetchall()
            pb = db_b.conn.execute("SELECT * FROM trace_prompts ORDER BY ordinal").fetchall()
            assert [tuple(r) for r in pa] == [tuple(r) for r in pb]
        finally:
            db_a.close()
            db_b.close()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 8_000_000_000_000))
def test_watermark_mtimes_round_trip_through_iso_text(ms: int) -> None:
    """The skip test compares a stored mtime with a fresh stat: the ISO column must round-trip."""
    assert iso_to_ms(ms_to_iso(ms)) == ms


def test_crlf_transcripts_parse(tree: Tree, plane: PlaneDb) -> None:
    body = lines(user("u1", "windows line endings", 1), assistant("a1", 2)).replace("\n", "\r\n")
    tree.write(f"{SID}.jsonl", body)
    report = traces_index(plane.conn, tree.root, NOW)
    assert (report["bad_lines"], report["bytes_read"]) == (0, len(body.encode()))
    assert row(plane)["turn_count"] == 2


def test_titles_and_stray_prompt_ids(tree: Tree, plane: PlaneDb) -> None:
    """Synthetic (no sample has them): ai-title is re-emitted and the last one wins, it is no
    turn; a promptId on an assistant record is not a prompt."""
    title = {"type": "ai-title", "sessionId": SID}
    body = lines(
        json.dumps({**title, "aiTitle": "Draft title"}),
        user("u1", "plan the parser rewrite", 1, promptId="P1"),
        assistant("a1", 2, promptId="P9"),
        json.dumps({**title, "aiTitle": "Rewriting the tokenizer"}),
        json.dumps({**title, "aiTitle": ""}),
    )
    tree.write(f"{SID}.jsonl", body)
    traces_index(plane.conn, tree.root, NOW)
    r = row(plane)
    assert r["ai_title"] == "Rewriting the tokenizer"
    assert (r["turn_count"], r["prompt_count"]) == (2, 1)
    assert r["search_text"] == "plan the parser rewrite\nRewriting the tokenizer"
    assert traces_search(plane.conn, "tokenizer").hits[0].ai_title == r["ai_title"]
