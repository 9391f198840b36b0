-- The state plane (memhtml 0.15.1's schema), applied with state.db ATTACHed as `state`.
-- These facts cannot be rebuilt from git; their durable copy is the committed sidecar
-- .memhtml/state/access.jsonl (headd_plane.sidecar).

CREATE TABLE state.access (
  -- No foreign key to main.files: SQLite has none across attached databases.
  path                TEXT PRIMARY KEY,
  -- Retrievals, gated by the reinforce cooldown so a replayed query cannot inflate salience.
  access_count        INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
  reinforcement_count INTEGER NOT NULL DEFAULT 0 CHECK (reinforcement_count >= 0),
  -- EWMA of non-neutral signals, in [-1, 1].
  outcome_score       REAL    NOT NULL DEFAULT 0.0 CHECK (outcome_score BETWEEN -1 AND 1),
  last_accessed_at    TEXT,
  last_reinforced_at  TEXT,
  updated_at          TEXT NOT NULL
);
-- The schema name qualifies the index name, not the table (`ON state.access` is a syntax error).
CREATE INDEX state.access_last ON access (last_accessed_at);

-- How many nights detected one machine-proposed `contradicts` edge; promoted into the files at 2.
CREATE TABLE state.edge_corroboration (
  src_path   TEXT NOT NULL,
  rel        TEXT NOT NULL,
  dst_path   TEXT NOT NULL,
  detections INTEGER NOT NULL DEFAULT 1 CHECK (detections >= 1),
  confirmed  INTEGER NOT NULL DEFAULT 0 CHECK (confirmed IN (0,1)),
  promoted   INTEGER NOT NULL DEFAULT 0 CHECK (promoted IN (0,1)),
  updated_at TEXT NOT NULL,
  PRIMARY KEY (src_path, rel, dst_path)
);
