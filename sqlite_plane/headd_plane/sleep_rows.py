"""The ``sleep_runs`` and ``sleep_phases`` rows of ``index.db`` (memhtml's ``0006_sleep`` tables).

Reporting only, as in memhtml: the trailers on the branch are the truth, and ``resume``,
``review`` and ``status`` read them, so losing ``index.db`` loses nothing a run needs. The daemon
writes these rows on the plane's one writer after a run, a resume and a merge.
"""

from __future__ import annotations

import json
import sqlite3

from headd.wire.answers import RunReport

from .state import transaction

_RUN_SQL = """
INSERT INTO sleep_runs (run_id, branch, base_sha, head_sha, status, started_at, ended_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id) DO UPDATE SET head_sha = excluded.head_sha, status = excluded.status,
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


def run_status(report: RunReport) -> str:
    """``failed`` when a phase failed, else ``review`` (memhtml's statuses: its run is failed
    whenever one of its phases is, its branch kept for a ``resume``)."""
    return "failed" if any(p.status == "failed" for p in report.phases) else "review"


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
            (
                report.run_id,
                report.branch,
                report.base,
                report.head,
                run_status(report),
                started,
                report.ended_at,
            ),
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


_EDGE_SQL = """
INSERT OR IGNORE INTO edges
  (src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run, created_at)
VALUES (?, 'relates_to', ?, 'memory', 1, ?, 'sleep', ?, ?)
"""


def record_derived_edges(
    conn: sqlite3.Connection, run_id: str, edges: list[tuple[str, str, float]], at: str
) -> int:
    """Replace the mined ``relates_to`` edges with this run's (``derived = 1``, provenance
    ``sleep``): derived edges are a function of the corpus and the embedder, never committed, and
    a rebuild drops them until the next run mines them again. An authored edge on the same pair
    stands. The number of rows written."""
    rows = [(src, dst, max(0.0, min(1.0, cosine)), run_id, at) for src, dst, cosine in edges]
    with transaction(conn):
        conn.execute("DELETE FROM edges WHERE derived = 1 AND rel = 'relates_to'")
        before = conn.total_changes
        conn.executemany(_EDGE_SQL, rows)
        return conn.total_changes - before
