-- Which transcript sessions the sleep cycle has already distilled into memories (memhtml 0.15.1's
-- schema). Run state, not a projection of the tree: an index rebuild leaves it alone. No foreign
-- key to traces, because a session's traces row may be dropped while the fact that it was read
-- stays true.

CREATE TABLE trace_consolidations (
  session_id      TEXT PRIMARY KEY,
  -- The sleep run, e.g. `sleep/2026-08-08`; provenance only.
  run_id          TEXT NOT NULL,
  -- The run's own instant, so two runs of one date agree.
  consolidated_at TEXT NOT NULL
);

CREATE INDEX trace_consolidations_run ON trace_consolidations (run_id);
