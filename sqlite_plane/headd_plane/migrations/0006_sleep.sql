-- headd index.db, migration 6: sleep-run reporting tables, kept so the schema equals memhtml's.
-- headd writes none of it; the commit trailers of a sleep branch are the record.

CREATE TABLE sleep_runs (
  run_id     TEXT PRIMARY KEY,
  branch     TEXT NOT NULL,
  base_sha   TEXT NOT NULL,
  head_sha   TEXT,
  status     TEXT NOT NULL CHECK (status IN ('running','review','merged','abandoned','failed')),
  started_at TEXT NOT NULL,
  ended_at   TEXT
);
CREATE INDEX sleep_runs_started ON sleep_runs (started_at);

CREATE TABLE sleep_phases (
  run_id     TEXT NOT NULL REFERENCES sleep_runs (run_id) ON DELETE CASCADE,
  phase      TEXT NOT NULL,
  ordinal    INTEGER NOT NULL,
  status     TEXT NOT NULL CHECK (status IN ('ok','failed','skipped')),
  commit_sha TEXT,
  counts     TEXT NOT NULL DEFAULT '{}',
  error      TEXT,
  llm_calls  INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL,
  ended_at   TEXT,
  PRIMARY KEY (run_id, phase)
);
