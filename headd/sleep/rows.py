"""The ``sleep_runs`` and ``sleep_phases`` rows of ``index.db`` (memhtml's ``0006_sleep`` tables).

Reporting only, as in memhtml: the trailers on the branch are the truth, and ``resume``,
``review`` and ``status`` read them, so losing ``index.db`` loses nothing a run needs. The daemon
writes these rows on the plane's one writer after a run, a resume and a merge.
"""

from __future__ import annotations

import json
import sqlite3

from headd_plane.state import transaction

from headd.sleep.run import RunReport

_RUN_SQL = """
INSERT INTO sleep_runs (run_id, branch, base_sha, head_sha, status, started_at, ended_at)
VALUES (?, ?, ?, ?, 'review', ?, ?)
ON CONFLICT (run_id) DO UPDATE SET head_sha = excluded.head_sha, status = 'review',
  ended_at = excluded.ended_at
"""

_PHASE_SQL = """
INSERT INTO sleep_phases
  (run_id, phase, ordinal, status, commit_sha, counts, error, llm_calls, started_at, ended_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
ON CONFLICT (run_id, phase) DO UPDATE SET status = excluded.status,
  commit_sha = excluded.commit_sha, counts = excluded.counts, error = excluded.error,
  started_at = excluded.started_at, ended_at = excluded.ended_at
"""


def record_run(conn: sqlite3.Connection, report: RunReport) -> int:
    """Upsert the run's row and one row per phase that ran now (a resumed run's phases that
    committed earlier keep their rows); the number of phase rows written."""
    if report.dry_run:
        return 0
    started = report.started_at or ""
    rows = [
        (
            report.run_id,
            phase.phase,
            phase.ordinal,
            phase.status,
            phase.commit,
            json.dumps(phase.counts, sort_keys=True, separators=(",", ":")),
            phase.reason if phase.status != "ok" else None,
            phase.started_at or started,
            phase.ended_at,
        )
        for phase in report.phases
        if phase.started_at is not None or phase.status == "skipped"
    ]
    with transaction(conn):
        conn.execute(
            _RUN_SQL,
            (report.run_id, report.branch, report.base, report.head, started, report.ended_at),
        )
        conn.executemany(_PHASE_SQL, rows)
    return len(rows)


def record_merge(conn: sqlite3.Connection, run_id: str, landed: str, at: str) -> None:
    """Mark a run merged (its row may be missing when ``index.db`` was made after the run)."""
    with transaction(conn):
        conn.execute(
            "UPDATE sleep_runs SET status = 'merged', head_sha = ?, ended_at = ? WHERE run_id = ?",
            (landed, at, run_id),
        )
