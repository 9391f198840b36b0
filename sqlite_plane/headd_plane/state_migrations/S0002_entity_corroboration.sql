-- How many nights proposed one entity merge (alias -> canonical within a type), memhtml 0.15.1's
-- schema. A merge the model alone proposes applies only once two nights agree (detections >= 2).
-- Names are stored normalized (lowercased, whitespace collapsed); the orientation is part of the key.

CREATE TABLE state.entity_corroboration (
  entity_type    TEXT NOT NULL,
  alias_name     TEXT NOT NULL,
  canonical_name TEXT NOT NULL,
  detections     INTEGER NOT NULL DEFAULT 1 CHECK (detections >= 1),
  confirmed      INTEGER NOT NULL DEFAULT 0 CHECK (confirmed IN (0,1)),
  promoted       INTEGER NOT NULL DEFAULT 0 CHECK (promoted IN (0,1)),
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (entity_type, alias_name, canonical_name)
);
-- "Every pending merge of one type".
CREATE INDEX state.entity_corroboration_pending ON entity_corroboration (entity_type, promoted);
