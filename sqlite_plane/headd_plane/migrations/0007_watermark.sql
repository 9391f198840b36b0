-- headd index.db, migration 7: the two watermarks.
-- index_state: one row (id = 1). head_sha is the commit the index describes; NULL on an existing
-- row means a rebuild emptied the tables and has not finished (update answers IndexStale).
-- embed_model/embed_dim name the vector space; a mismatch with configuration is a refusal.

CREATE TABLE index_state (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  head_sha      TEXT,
  embed_model   TEXT NOT NULL,
  embed_dim     INTEGER NOT NULL CHECK (embed_dim > 0),
  rebuilt_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

-- One row per transcript file (the trace plane's incremental scan): size + mtime + byte offset.
CREATE TABLE trace_watermarks (
  file_path  TEXT PRIMARY KEY,
  size       INTEGER NOT NULL,
  mtime      TEXT NOT NULL,
  byte_off   INTEGER NOT NULL DEFAULT 0 CHECK (byte_off >= 0),
  scanned_at TEXT NOT NULL
);
