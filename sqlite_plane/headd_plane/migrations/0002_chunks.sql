-- headd index.db, migration 2: chunks and their vectors, keyed by content, not by path,
-- so a `git mv` (every archive move) keeps its vectors and costs no embedding call.

CREATE TABLE chunks (
  chunk_id     TEXT PRIMARY KEY,            -- sha256(content_hash || ':' || ordinal)
  path         TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  content_hash TEXT NOT NULL,
  ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
  text         TEXT NOT NULL,
  char_count   INTEGER NOT NULL             -- UTF-16 code units, as memhtml counts
);
CREATE INDEX chunks_path ON chunks (path);
CREATE INDEX chunks_hash ON chunks (content_hash);
CREATE UNIQUE INDEX chunks_hash_ord ON chunks (content_hash, ordinal);

CREATE TABLE embeddings (
  chunk_id   TEXT PRIMARY KEY REFERENCES chunks (chunk_id) ON DELETE CASCADE,
  model      TEXT NOT NULL,                 -- the vector space, `<model>@<dim>`
  dim        INTEGER NOT NULL CHECK (dim > 0),
  vec        BLOB NOT NULL,                 -- float32 little-endian
  created_at TEXT NOT NULL
);
CREATE INDEX embeddings_model ON embeddings (model);
