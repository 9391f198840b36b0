"""The state plane: reinforce (cooldown decided in SQL, EWMA, clamp).

Every test runs against real SQLite files opened through ``headd_plane.db`` with the shipped
migrations, ``state.db`` attached as ``state``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from headd_plane.db import PlaneDb, open_writer
from headd_plane.state import (
    OUTCOME_EWMA_ALPHA,
    REINFORCE_COOLDOWN_S,
    access_row,
    iso_ms,
    reinforce,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from headd.errors import InvalidParams

BASE = datetime(2026, 8, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return BASE + timedelta(seconds=seconds)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    assert db.has_state
    yield db
    db.close()


def test_first_bump_creates_the_row_and_neutral_moves_no_outcome(plane: PlaneDb) -> None:
    result = reinforce(plane.conn, ["areas/a.html"], "neutral", at(0))
    assert result == {"bumped": ["areas/a.html"], "cooled_down": []}
    row = access_row(plane.conn, "areas/a.html")
    assert row is not None
    assert row["access_count"] == 1
    assert row["reinforcement_count"] == 0
    assert row["outcome_score"] == 0
    assert row["last_accessed_at"] == "2026-08-01T00:00:00.000Z"
    assert row["last_reinforced_at"] is None


def test_a_bump_inside_the_window_is_cooled_down_and_moves_nothing(plane: PlaneDb) -> None:
    reinforce(plane.conn, ["areas/a.html"], "neutral", at(0))
    result = reinforce(plane.conn, ["areas/a.html"], "positive", at(60))
    assert result == {"bumped": [], "cooled_down": ["areas/a.html"]}
    row = access_row(plane.conn, "areas/a.html")
    assert row is not None
    assert row["access_count"] == 1
    assert row["reinforcement_count"] == 0
    # The stamp must not move on a refused bump, or a query loop would extend the window forever.
    assert row["last_accessed_at"] == iso_ms(at(0))


def test_the_cooldown_boundary_is_inclusive(plane: PlaneDb) -> None:
    reinforce(plane.conn, ["p.html"], "neutral", at(0))
    assert (
        reinforce(plane.conn, ["p.html"], "neutral", at(REINFORCE_COOLDOWN_S - 1))["bumped"] == []
    )
    assert reinforce(plane.conn, ["p.html"], "neutral", at(REINFORCE_COOLDOWN_S))["bumped"] == [
        "p.html"
    ]


def test_outcome_moves_by_ewma_only_on_non_neutral_signals(plane: PlaneDb) -> None:
    c = plane.conn
    reinforce(c, ["p.html"], "positive", at(0))
    row = access_row(c, "p.html")
    assert row is not None and row["outcome_score"] == pytest.approx(1.0)
    assert row["reinforcement_count"] == 1
    assert row["last_reinforced_at"] == iso_ms(at(0))
    reinforce(c, ["p.html"], "neutral", at(900))
    row = access_row(c, "p.html")
    assert row is not None and row["outcome_score"] == pytest.approx(1.0)
    assert row["reinforcement_count"] == 1
    assert row["last_reinforced_at"] == iso_ms(at(0))
    reinforce(c, ["p.html"], "negative", at(1800))
    row = access_row(c, "p.html")
    assert row is not None
    assert row["outcome_score"] == pytest.approx(1 * (1 - OUTCOME_EWMA_ALPHA) - OUTCOME_EWMA_ALPHA)
    assert row["reinforcement_count"] == 2
    assert row["access_count"] == 3


def test_the_score_stays_inside_its_range_under_repeated_signals(plane: PlaneDb) -> None:
    for step in range(30):
        reinforce(plane.conn, ["p.html"], "negative", at(step * REINFORCE_COOLDOWN_S))
    row = access_row(plane.conn, "p.html")
    assert row is not None
    assert -1.0 <= row["outcome_score"] < -0.9
    assert row["access_count"] == 30


def test_a_mixed_batch_splits_by_each_paths_own_cooldown(plane: PlaneDb) -> None:
    reinforce(plane.conn, ["hot.html"], "neutral", at(0))
    result = reinforce(plane.conn, ["hot.html", "cold.html", "new.html"], "neutral", at(60))
    assert result == {"bumped": ["cold.html", "new.html"], "cooled_down": ["hot.html"]}


def test_a_repeated_path_counts_once_and_empty_paths_are_dropped(plane: PlaneDb) -> None:
    result = reinforce(plane.conn, ["a.html", "a.html", "", "a.html"], "positive", at(0))
    assert result == {"bumped": ["a.html"], "cooled_down": []}
    row = access_row(plane.conn, "a.html")
    assert row is not None and row["access_count"] == 1


def test_more_paths_than_one_statement_batch(plane: PlaneDb) -> None:
    paths = [f"areas/m{i:04d}.html" for i in range(1203)]
    assert len(reinforce(plane.conn, paths, "neutral", at(0))["bumped"]) == 1203
    again = reinforce(plane.conn, paths, "neutral", at(10))
    assert again["bumped"] == [] and len(again["cooled_down"]) == 1203
    count = plane.conn.execute("SELECT count(*), sum(access_count) FROM state.access").fetchone()
    assert tuple(count) == (1203, 1203)


def test_an_unknown_signal_is_refused(plane: PlaneDb) -> None:
    with pytest.raises(InvalidParams):
        reinforce(plane.conn, ["a.html"], "great", at(0))


def test_without_a_state_plane_nothing_is_bumped(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "index.db")
    try:
        assert reinforce(db.conn, ["a.html"], "neutral", at(0)) == {
            "bumped": [],
            "cooled_down": ["a.html"],
        }
    finally:
        db.close()


def test_two_writers_at_one_instant_bump_once(tmp_path: Path) -> None:
    """The cooldown is decided inside the statement: racing processes cannot both bump."""
    first = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    second = open_writer(tmp_path / "index.db", tmp_path / "state.db")
    try:
        for round_no in range(8):
            path = f"race{round_no}.html"
            barrier = threading.Barrier(2)
            results: list[list[str]] = []

            def go(
                db: PlaneDb,
                path: str = path,
                barrier: threading.Barrier = barrier,
                results: list[list[str]] = results,
            ) -> None:
                barrier.wait()
                results.append(reinforce(db.conn, [path], "positive", at(0))["bumped"])

            threads = [threading.Thread(target=go, args=(db,)) for db in (first, second)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert sorted(len(r) for r in results) == [0, 1]
            row = access_row(first.conn, path)
            assert row is not None and row["access_count"] == 1
    finally:
        first.close()
        second.close()


def _model(events: list[tuple[int, str]]) -> dict[str, float] | None:
    """The specification of reinforce on one path, in plain Python."""
    row: dict[str, float] | None = None
    last: int | None = None
    values = {"positive": 1, "negative": -1, "neutral": 0}
    for t, signal in events:
        v = values[signal]
        if row is None:
            row = {"access": 1, "reinf": 0 if v == 0 else 1, "score": float(v)}
            last = t
            continue
        assert last is not None
        if t - last < REINFORCE_COOLDOWN_S:
            continue
        last = t
        row["access"] += 1
        if v != 0:
            row["reinf"] += 1
            row["score"] = max(-1.0, min(1.0, row["score"] * 0.7 + v * 0.3))
    return row


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2000), st.sampled_from(["positive", "negative", "neutral"])),
        min_size=1,
        max_size=12,
    )
)
def test_reinforce_matches_its_specification(steps: list[tuple[int, str]]) -> None:
    events: list[tuple[int, str]] = []
    clock = 0
    for gap, signal in steps:
        clock += gap
        events.append((clock, signal))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("ATTACH DATABASE ':memory:' AS state")
    from headd_plane.db import STATE_MIGRATIONS_DIR

    for sql in sorted(STATE_MIGRATIONS_DIR.glob("*.sql")):
        conn.executescript(sql.read_text())
    for t, signal in events:
        reinforce(conn, ["p.html"], signal, at(t))
    expected = _model(events)
    row = access_row(conn, "p.html")
    assert expected is not None and row is not None
    assert row["access_count"] == expected["access"]
    assert row["reinforcement_count"] == expected["reinf"]
    assert row["outcome_score"] == pytest.approx(expected["score"], abs=1e-9)
    conn.close()
