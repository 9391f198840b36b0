-- headd index.db, migration 101 (headd only, not memhtml's schema): the head's vector cache.
-- One row per (vector space, content hash). The content hash digests the <article> only, so a
-- move or a head-only edit keeps its row; a vector is float32 little-endian, 4 * dim bytes.
-- Rows of different spaces never meet: every read and write names its space.
-- A rowid table, not WITHOUT ROWID: a 1.5 KB row in a WITHOUT ROWID b-tree leaves half of every
-- page empty (measured 46 MB vs 21 MB and a load twice as slow for 10,000 x 384).

CREATE TABLE head_vectors (
  space TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE (space, content_hash)
);
