-- headd index.db, migration 1: one row per memory file, and its tag/entity/facet/citation rows.
-- The same schema memhtml 0.15.1 keeps in its own index.db, so rows compare one to one.
-- Everything here is derived from the tree: deleting index.db costs a rebuild, never data.
-- Child tables cascade on UPDATE as well as DELETE because an archive move changes files.path.

CREATE TABLE files (
  path            TEXT PRIMARY KEY,
  blob_sha        TEXT NOT NULL,
  content_hash    TEXT NOT NULL,
  memory_type     TEXT NOT NULL CHECK (memory_type IN (
                    'episodic','semantic','procedural','agent_insight',
                    'user_preference','error_pattern','verdict','precedent','arc')),
  title           TEXT NOT NULL,
  body_text       TEXT NOT NULL,
  gist            TEXT NOT NULL DEFAULT '',
  fts_text        TEXT NOT NULL DEFAULT '',
  disclosure_text TEXT NOT NULL DEFAULT '',
  para            TEXT NOT NULL CHECK (para IN ('projects','areas','resources','archive')),
  workspace       TEXT,
  confidence      REAL    NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
  importance      INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
  archived        INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0,1)),
  origin_path     TEXT,
  word_count      INTEGER NOT NULL DEFAULT 0,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  event_at        TEXT,
  archived_at     TEXT,
  valid_from      TEXT,
  valid_until     TEXT,
  reprieves       INTEGER NOT NULL DEFAULT 0 CHECK (reprieves >= 0),
  needs_revision  INTEGER NOT NULL DEFAULT 0 CHECK (needs_revision IN (0,1)),
  author          TEXT NOT NULL DEFAULT 'agent',
  session_id      TEXT,
  prompt_id       TEXT,
  turn_uuid       TEXT,
  indexed_at      TEXT NOT NULL
);

-- The database itself refuses a second active copy of one body (the dedup guarantee).
CREATE UNIQUE INDEX files_content_hash_active ON files (content_hash) WHERE archived = 0;
CREATE INDEX files_type_active   ON files (memory_type) WHERE archived = 0;
CREATE INDEX files_workspace     ON files (workspace)   WHERE archived = 0;
CREATE INDEX files_para          ON files (para);
CREATE INDEX files_updated       ON files (updated_at)  WHERE archived = 0;
CREATE INDEX files_event         ON files (event_at)    WHERE event_at IS NOT NULL;
CREATE INDEX files_session       ON files (session_id)  WHERE session_id IS NOT NULL;
CREATE INDEX files_ttl           ON files (valid_until) WHERE valid_until IS NOT NULL AND archived = 0;
CREATE INDEX files_blob          ON files (blob_sha);

CREATE TABLE file_tags (
  path TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  tag  TEXT NOT NULL,
  PRIMARY KEY (path, tag)
);
CREATE INDEX file_tags_tag ON file_tags (tag);

-- `type:name` split at the first colon; `concept:` rows come from <dfn>, `lang:` from data-lang.
CREATE TABLE file_entities (
  path        TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  entity_type TEXT NOT NULL,
  entity_name TEXT NOT NULL,
  PRIMARY KEY (path, entity_type, entity_name)
);
CREATE INDEX file_entities_name ON file_entities (entity_type, entity_name);

-- <dt>/<dd> pairs; numeric_value is unitless (the unit lives in the prose).
CREATE TABLE file_facets (
  path          TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  name          TEXT NOT NULL,
  value         TEXT NOT NULL,
  numeric_value REAL,
  PRIMARY KEY (path, name, value)
);
CREATE INDEX file_facets_name ON file_facets (name);

-- <cite> (href NULL) and <q cite>; href is any URI, so it is not constrained.
CREATE TABLE file_citations (
  path TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  text TEXT NOT NULL,
  href TEXT,
  PRIMARY KEY (path, text)
);
