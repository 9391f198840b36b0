"""The committed sidecar ``.memhtml/state/access.jsonl``: memhtml 0.15.1's exact bytes, a stable
export, a merge-by-max import that counts (never fails on) unparseable lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from headd_plane.db import PlaneDb, open_writer
from headd_plane.sidecar import entry_from_row, export_sidecar, import_sidecar
from headd_plane.state import access_row, reinforce
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.memfile.sidecar import (
    STATE_SIDECAR_PATH,
    RefusedRow,
    SidecarEntry,
    js_number,
    parse_sidecar,
    render_sidecar,
    round4,
)

BASE = datetime(2026, 8, 1, tzinfo=UTC)

# The rows memhtml's own sidecar test renders (areas/b.html with float noise, areas/a.html with -0).
ROW_B = (
    "areas/b.html",
    3,
    1,
    0.30000000000000004,
    "2026-08-01T00:00:00Z",
    None,
    "2026-08-01T00:00:00Z",
)
ROW_A = ("areas/a.html", 0, 0, -0.0, None, None, "2026-08-01T00:00:00Z")


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "db" / "index.db", tmp_path / "db" / "state.db")
    yield db
    db.close()


def test_round4_is_javascripts_math_round_on_the_grid() -> None:
    assert round4(0.30000000000000004) == 0.3
    assert str(round4(-0.0)) == "0.0"  # -0 normalized
    assert round4(0.00005) == 0.0001  # a tie rounds toward +infinity, as Math.round does
    assert round4(-0.00005) == 0.0
    assert round4(-0.12345) == -0.1234


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (1.0, "1"),
        (-1.0, "-1"),
        (0.3, "0.3"),
        (-0.1234, "-0.1234"),
        (0.0001, "0.0001"),
        (2.5e-6, "0.0000025"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123.456, "123.456"),
    ],
)
def test_numbers_are_written_as_json_stringify_writes_them(value: float, text: str) -> None:
    assert js_number(value) == text


def test_the_rendered_bytes_are_memhtmls() -> None:
    rendered = render_sidecar([entry_from_row(ROW_B), entry_from_row(ROW_A)])
    assert rendered == (
        '{"path":"areas/b.html","accessCount":3,"reinforcementCount":1,"outcomeScore":0.3,'
        '"lastAccessedAt":"2026-08-01T00:00:00Z","lastReinforcedAt":null,'
        '"updatedAt":"2026-08-01T00:00:00Z"}\n'
        '{"path":"areas/a.html","accessCount":0,"reinforcementCount":0,"outcomeScore":0,'
        '"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-08-01T00:00:00Z"}\n'
    )
    assert render_sidecar([]) == ""


def test_strings_escape_as_json_stringify_does() -> None:
    row = ('a"b\\c\u0001\n\u00e9\u2028.html', 1, 0, 0.5, None, None, "x")
    line = render_sidecar([entry_from_row(row)])
    assert line.startswith('{"path":"a\\"b\\\\c\\u0001\\n\u00e9\u2028.html","accessCount":1,')
    assert parse_sidecar(line).entries[0].path == row[0]


def test_parse_counts_every_unusable_line_and_keeps_the_rest() -> None:
    good = render_sidecar([entry_from_row(ROW_B), entry_from_row(ROW_A)])
    damaged = (
        good
        + "\n   \n"  # blank lines are not rows and not errors
        + "not json\n"
        + "[1, 2]\n"
        + "null\n"
        + '{"accessCount": 1}\n'  # no path
        + '{"path": ""}\n'
        + '{"path": "x.html", "accessCount": NaN}\n'  # not JSON to JavaScript either
        + '{"path": "neg.html", "accessCount": -2}\n'  # the table would refuse it
        + '{"path":"areas/c.html","accessCo'  # a write cut short
    )
    parsed = parse_sidecar(damaged)
    assert parsed.skipped == 8
    assert [(r.line, r.path) for r in parsed.refused][-2:] == [(11, "neg.html"), (12, None)]
    assert [e.path for e in parsed.entries] == ["areas/b.html", "areas/a.html"]
    assert parsed.entries[0].outcomeScore == 0.3


@pytest.mark.parametrize(
    "count",
    ["123456789012345678901234567890", "9223372036854775808", "1e300", "1" + "0" * 400],
)
def test_an_out_of_range_count_refuses_its_row_by_line_and_the_import_keeps_the_rest(
    tmp_path: Path, plane: PlaneDb, count: str
) -> None:
    """A count beyond SQLite's 64 bits would fail the whole import with an OverflowError (the
    daemon answering -32603); that row is refused by its line and path, and the rest land."""
    store = tmp_path / "store"
    (store / STATE_SIDECAR_PATH).parent.mkdir(parents=True)
    (store / STATE_SIDECAR_PATH).write_text(
        '{"path":"ok.html","accessCount":3,"reinforcementCount":0,"outcomeScore":0,'
        '"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-09-01T00:00:00Z"}\n'
        f'{{"path":"huge.html","accessCount":{count},"reinforcementCount":0,"outcomeScore":0,'
        '"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-09-01T00:00:00Z"}\n'
    )
    report = import_sidecar(plane.conn, store)
    assert (report["rows"], report["restored"], report["skipped"]) == (1, 1, 1)
    assert report["refused"] == [
        RefusedRow(2, "huge.html", "accessCount is out of range (above 9223372036854775807)")
    ]
    row = access_row(plane.conn, "ok.html")
    assert row is not None and row["access_count"] == 3
    assert access_row(plane.conn, "huge.html") is None


def test_missing_fields_take_defaults() -> None:
    parsed = parse_sidecar('{"path":"p.html","accessCount":true,"outcomeScore":"1"}\n')
    assert parsed.skipped == 0
    (entry,) = parsed.entries
    assert (entry.accessCount, entry.reinforcementCount, entry.outcomeScore) == (0, 0, 0.0)
    assert (entry.lastAccessedAt, entry.lastReinforcedAt, entry.updatedAt) == (None, None, "")


def _populate(db: PlaneDb) -> None:
    for i in range(40):
        t = BASE + timedelta(seconds=i * 37)
        signal = ("positive", "negative", "neutral")[i % 3]
        reinforce(db.conn, [f"areas/m{i % 17:02d}.html", "areas/hot.html"], signal, t)


def test_export_import_export_round_trips_byte_for_byte(tmp_path: Path, plane: PlaneDb) -> None:
    store = tmp_path / "store"
    _populate(plane)
    first = export_sidecar(plane.conn, store)
    assert first["written"] and first["rows"] == 18
    data = (store / STATE_SIDECAR_PATH).read_bytes()
    # Unchanged plane: same bytes, nothing written.
    assert export_sidecar(plane.conn, store)["written"] is False

    fresh = open_writer(tmp_path / "other" / "index.db", tmp_path / "other" / "state.db")
    try:
        report = import_sidecar(fresh.conn, store)
        assert report == {
            "path": STATE_SIDECAR_PATH,
            "rows": 18,
            "restored": 18,
            "skipped": 0,
            "has_state": True,
            "refused": [],
        }
        other = tmp_path / "store2"
        export_sidecar(fresh.conn, other)
        assert (other / STATE_SIDECAR_PATH).read_bytes() == data
    finally:
        fresh.close()


def test_import_merges_by_max_and_keeps_later_stamps(tmp_path: Path, plane: PlaneDb) -> None:
    c = plane.conn
    reinforce(c, ["busy.html"], "positive", BASE)
    for i in range(1, 5):
        reinforce(c, ["busy.html"], "neutral", BASE + timedelta(seconds=900 * i))
    reinforce(c, ["quiet.html"], "neutral", BASE)
    store = tmp_path / "store"
    (store / STATE_SIDECAR_PATH).parent.mkdir(parents=True)
    (store / STATE_SIDECAR_PATH).write_text(
        '{"path":"busy.html","accessCount":2,"reinforcementCount":0,"outcomeScore":-0.5,'
        '"lastAccessedAt":"2026-07-01T00:00:00.000Z","lastReinforcedAt":null,'
        '"updatedAt":"2026-07-01T00:00:00.000Z"}\n'
        '{"path":"quiet.html","accessCount":9,"reinforcementCount":4,"outcomeScore":0.25,'
        '"lastAccessedAt":"2026-09-01T00:00:00.000Z","lastReinforcedAt":null,'
        '"updatedAt":"2026-09-01T00:00:00.000Z"}\n'
        '{"path":"new.html","accessCount":1,"reinforcementCount":0,"outcomeScore":0,'
        '"lastAccessedAt":null,"lastReinforcedAt":null,"updatedAt":"2026-09-01T00:00:00.000Z"}\n'
        "garbage\n"
    )
    report = import_sidecar(c, store)
    assert (report["rows"], report["restored"], report["skipped"]) == (3, 3, 1)
    busy = access_row(c, "busy.html")
    assert busy is not None
    assert busy["access_count"] == 5 and busy["reinforcement_count"] == 1  # the plane's larger
    assert busy["last_accessed_at"] == "2026-08-01T01:00:00.000Z"  # the later stamp
    assert busy["last_reinforced_at"] == "2026-08-01T00:00:00.000Z"
    quiet = access_row(c, "quiet.html")
    assert quiet is not None
    assert quiet["access_count"] == 9 and quiet["reinforcement_count"] == 4  # the file's larger
    assert quiet["last_accessed_at"] == "2026-09-01T00:00:00.000Z"
    assert quiet["last_reinforced_at"] is None  # null on both sides stays null
    assert quiet["outcome_score"] == 0.25
    new = access_row(c, "new.html")
    assert new is not None and new["last_accessed_at"] is None


def test_importing_a_missing_sidecar_restores_nothing(tmp_path: Path, plane: PlaneDb) -> None:
    report = import_sidecar(plane.conn, tmp_path / "nowhere")
    assert report["rows"] == 0 and report["restored"] == 0


_paths = st.text(
    alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30
).filter(lambda s: s.strip() != "")
_stamps = st.none() | st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.000Z"))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.builds(
            SidecarEntry,
            path=_paths,
            accessCount=st.integers(0, 10**9),
            reinforcementCount=st.integers(0, 10**6),
            outcomeScore=st.floats(-1, 1).map(round4),
            lastAccessedAt=_stamps,
            lastReinforcedAt=_stamps,
            updatedAt=_stamps.map(lambda s: s or ""),
        ),
        max_size=8,
    )
)
def test_render_parse_render_is_the_identity(entries: list[SidecarEntry]) -> None:
    text = render_sidecar(entries)
    parsed = parse_sidecar(text)
    assert parsed.skipped == 0
    assert render_sidecar(list(parsed.entries)) == text
    for line, entry in zip(text.split("\n")[:-1], entries, strict=True):
        decoded = json.loads(line)
        assert list(decoded) == [
            "path",
            "accessCount",
            "reinforcementCount",
            "outcomeScore",
            "lastAccessedAt",
            "lastReinforcedAt",
            "updatedAt",
        ]
        assert decoded["path"] == entry.path
        assert decoded["outcomeScore"] == entry.outcomeScore
