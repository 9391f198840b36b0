-- headd index.db, migration 101 (headd only, not memhtml's schema): the head's vector cache.
-- One row per (vector space, content hash). The content hash digests the <article> only, so a
-- move or a head-only edit keeps its row; a vector is float32 little-endian, 4 * dim bytes.
-- Rows of different spaces never meet: every read and write names its space.

CREATE TABLE head_vectors (
  space TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (space, content_hash)
) WITHOUT ROWID;
