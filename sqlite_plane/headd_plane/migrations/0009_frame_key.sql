-- headd index.db, migration 9: the claim's frame key (the slot a claim fills), NULL when the
-- claim has no frame shape. Additive: a new column and a partial index over live non-task claims.

ALTER TABLE files ADD COLUMN frame_key TEXT;

CREATE INDEX files_frame_key_active ON files (frame_key)
  WHERE archived = 0 AND memory_type <> 'task' AND frame_key IS NOT NULL;
