"""``state export`` merges with the sidecar on disk: memhtml's own rows are never dropped.

The file under test is the one memhtml 0.15.1 wrote itself (``tests/data/memhtml-state/``, see
its README): after ``memhtml reinforce`` and ``memhtml state export``, headd's export must keep
every row memhtml wrote, merge the rows both hold by max, and write instants as memhtml does.

Mutation notes (each applied once, the named test seen red, then reverted):
- ``export_sidecar`` rendering ``access_entries`` alone -> every test here.
- ``memhtml_instant`` returning its argument -> ``test_instants_are_written_in_memhtmls_form``.
- ``merge_entries`` taking the file's score whatever its stamp ->
  ``test_a_shared_row_takes_each_field_by_its_own_rule``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from headd_plane.db import PlaneDb, open_writer
from headd_plane.sidecar import export_sidecar
from headd_plane.state import reinforce
from hypothesis import given, settings
from hypothesis import strategies as st
from support.data import DATA

from headd.memfile.sidecar import (
    STATE_SIDECAR_PATH,
    SidecarEntry,
    merge_entries,
    parse_sidecar,
)

MEMHTML_FILE = DATA / "memhtml-state" / "access-0.15.1.jsonl"
POSTGRES = "areas/inbox/postgres-is-the-system-of-record.html"
REDIS = "areas/inbox/redis-caches-sessions.html"
LATER = datetime(2026, 12, 2, 8, 30, 15, 250_000, tzinfo=UTC)
MEMHTML_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[PlaneDb]:
    db = open_writer(tmp_path / "plane" / "index.db", tmp_path / "plane" / "state.db")
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    target = root / STATE_SIDECAR_PATH
    target.parent.mkdir(parents=True)
    target.write_bytes(MEMHTML_FILE.read_bytes())
    return root


def lines_by_path(raw: bytes) -> dict[str, bytes]:
    out = {}
    for line in raw.splitlines():
        entry = parse_sidecar(line.decode()).entries[0]
        out[entry.path] = line
    return out


def test_an_empty_plane_exports_memhtmls_file_unchanged(plane: PlaneDb, store: Path) -> None:
    report = export_sidecar(plane.conn, store)
    assert report["written"] is False and report["rows"] == 2
    assert (store / STATE_SIDECAR_PATH).read_bytes() == MEMHTML_FILE.read_bytes()


def test_rows_memhtml_wrote_survive_and_shared_rows_merge_by_max(
    plane: PlaneDb, store: Path
) -> None:
    original = lines_by_path(MEMHTML_FILE.read_bytes())
    reinforce(plane.conn, [POSTGRES], "positive", LATER)
    reinforce(plane.conn, ["areas/inbox/headd-only.html"], "neutral", LATER)
    report = export_sidecar(plane.conn, store)
    assert report["written"] is True and report["rows"] == 3
    raw = (store / STATE_SIDECAR_PATH).read_bytes()
    written = lines_by_path(raw)
    assert sorted(written) == sorted([POSTGRES, REDIS, "areas/inbox/headd-only.html"])
    assert written[REDIS] == original[REDIS], "memhtml's row is kept byte for byte"
    memhtml_postgres = parse_sidecar(original[POSTGRES].decode()).entries[0]
    merged = parse_sidecar(written[POSTGRES].decode()).entries[0]
    assert merged.accessCount == max(1, memhtml_postgres.accessCount)
    assert merged.reinforcementCount >= memhtml_postgres.reinforcementCount
    assert merged.lastReinforcedAt == "2026-12-02T08:30:15Z"  # the later stamp, cut to seconds
    assert merged.updatedAt == "2026-12-02T08:30:15Z"
    # Exporting again changes nothing.
    assert export_sidecar(plane.conn, store)["written"] is False
    assert (store / STATE_SIDECAR_PATH).read_bytes() == raw


@pytest.mark.parametrize("plane_newer", [True, False])
def test_a_shared_row_takes_each_field_by_its_own_rule(plane_newer: bool) -> None:
    """Counts the larger, stamps the later, each on its own; the score from the row updated last."""
    early, late = "2026-12-01T10:00:00Z", "2026-12-02T10:00:00.500Z"
    on_disk = SidecarEntry(
        path=REDIS,
        accessCount=7,
        reinforcementCount=1,
        outcomeScore=-1.0,
        lastAccessedAt="2026-12-03T00:00:00Z",
        lastReinforcedAt=None,
        updatedAt=early if plane_newer else late,
    )
    ours = SidecarEntry(
        path=REDIS,
        accessCount=2,
        reinforcementCount=5,
        outcomeScore=0.5,
        lastAccessedAt=None,
        lastReinforcedAt="2026-12-01T11:00:00.250Z",
        updatedAt=late if plane_newer else early,
    )
    (merged,) = merge_entries([on_disk], [ours])
    assert (merged.accessCount, merged.reinforcementCount) == (7, 5)
    assert merged.lastAccessedAt == "2026-12-03T00:00:00Z"
    assert merged.lastReinforcedAt == "2026-12-01T11:00:00Z"
    assert merged.updatedAt == "2026-12-02T10:00:00Z"
    assert merged.outcomeScore == (0.5 if plane_newer else -1.0)


def test_instants_are_written_in_memhtmls_form(plane: PlaneDb, tmp_path: Path) -> None:
    reinforce(plane.conn, ["areas/inbox/a.html"], "positive", LATER)
    export_sidecar(plane.conn, tmp_path / "fresh")
    entry = parse_sidecar((tmp_path / "fresh" / STATE_SIDECAR_PATH).read_text()).entries[0]
    for instant in (entry.lastAccessedAt, entry.lastReinforcedAt, entry.updatedAt):
        assert instant is not None and MEMHTML_INSTANT.fullmatch(instant), instant


@settings(max_examples=8, deadline=None)
@given(
    paths=st.lists(st.sampled_from([POSTGRES, REDIS, "areas/x.html", "areas/y.html"]), max_size=6),
    signal=st.sampled_from(["positive", "negative", "neutral"]),
)
def test_export_never_drops_a_row_or_lowers_a_count(
    tmp_path_factory: pytest.TempPathFactory, paths: list[str], signal: str
) -> None:
    """Whatever the plane holds, every path the file held stays, with counts no lower."""
    root = tmp_path_factory.mktemp("prop")
    target = root / "store" / STATE_SIDECAR_PATH
    target.parent.mkdir(parents=True)
    target.write_bytes(MEMHTML_FILE.read_bytes())
    before = {e.path: e for e in parse_sidecar(MEMHTML_FILE.read_text()).entries}
    db = open_writer(root / "p" / "index.db", root / "p" / "state.db")
    try:
        if paths:
            reinforce(db.conn, paths, signal, LATER)
        export_sidecar(db.conn, root / "store")
    finally:
        db.close()
    after = {e.path: e for e in parse_sidecar(target.read_text()).entries}
    assert set(before) <= set(after)
    for path, entry in before.items():
        assert after[path].accessCount >= entry.accessCount
        assert after[path].reinforcementCount >= entry.reinforcementCount
        assert (after[path].updatedAt or "") >= entry.updatedAt
