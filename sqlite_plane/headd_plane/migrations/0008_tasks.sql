-- headd index.db, migration 8: `task` becomes the tenth memory type and the fourth edge class;
-- files gains task_status and due_at. SQLite cannot ALTER a CHECK, so both tables are recreated.
--
-- With foreign keys on, DROP TABLE files deletes every child row by cascade, even inside this
-- migration's transaction, and embeddings hang one cascade further down. So each child table is
-- copied aside first and copied back under the new parent; nothing depends on foreign-key state.

CREATE TABLE files_next (
  path            TEXT PRIMARY KEY,
  blob_sha        TEXT NOT NULL,
  content_hash    TEXT NOT NULL,
  memory_type     TEXT NOT NULL CHECK (memory_type IN (
                    'episodic','semantic','procedural','agent_insight',
                    'user_preference','error_pattern','verdict','precedent','arc','task')),
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
  indexed_at      TEXT NOT NULL,
  -- NULL on every non-task (an IN-list CHECK admits NULL).
  task_status     TEXT CHECK (task_status IN ('todo','doing','blocked','done')),
  -- ISO date or datetime, compared as a string like event_at.
  due_at          TEXT
);

INSERT INTO files_next
  SELECT path, blob_sha, content_hash, memory_type, title, body_text, gist, fts_text,
         disclosure_text, para, workspace, confidence, importance, archived, origin_path,
         word_count, created_at, updated_at, event_at, archived_at, valid_from, valid_until,
         reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, indexed_at,
         NULL, NULL
  FROM files;

CREATE TEMP TABLE keep_file_tags      AS SELECT * FROM file_tags;
CREATE TEMP TABLE keep_file_entities  AS SELECT * FROM file_entities;
CREATE TEMP TABLE keep_file_facets    AS SELECT * FROM file_facets;
CREATE TEMP TABLE keep_file_citations AS SELECT * FROM file_citations;
CREATE TEMP TABLE keep_chunks         AS SELECT * FROM chunks;
CREATE TEMP TABLE keep_embeddings     AS SELECT * FROM embeddings;

DROP TABLE files_fts;
DROP TABLE files;
ALTER TABLE files_next RENAME TO files;

INSERT INTO file_tags      SELECT * FROM keep_file_tags;
INSERT INTO file_entities  SELECT * FROM keep_file_entities;
INSERT INTO file_facets    SELECT * FROM keep_file_facets;
INSERT INTO file_citations SELECT * FROM keep_file_citations;
INSERT INTO chunks         SELECT * FROM keep_chunks;
INSERT INTO embeddings     SELECT * FROM keep_embeddings;

DROP TABLE keep_file_tags;
DROP TABLE keep_file_entities;
DROP TABLE keep_file_facets;
DROP TABLE keep_file_citations;
DROP TABLE keep_chunks;
DROP TABLE keep_embeddings;

-- A dropped table takes its indexes along: every one is declared again. Two open tasks with one
-- body are two pieces of work, so the dedup index leaves tasks out.
CREATE UNIQUE INDEX files_content_hash_active ON files (content_hash)
  WHERE archived = 0 AND memory_type <> 'task';
CREATE INDEX files_type_active   ON files (memory_type) WHERE archived = 0;
CREATE INDEX files_workspace     ON files (workspace)   WHERE archived = 0;
CREATE INDEX files_para          ON files (para);
CREATE INDEX files_updated       ON files (updated_at)  WHERE archived = 0;
CREATE INDEX files_event         ON files (event_at)    WHERE event_at IS NOT NULL;
CREATE INDEX files_session       ON files (session_id)  WHERE session_id IS NOT NULL;
CREATE INDEX files_ttl           ON files (valid_until) WHERE valid_until IS NOT NULL AND archived = 0;
CREATE INDEX files_blob          ON files (blob_sha);
CREATE INDEX files_task_status ON files (task_status)
  WHERE memory_type = 'task' AND archived = 0;

CREATE VIRTUAL TABLE files_fts USING fts5(
  fts_text,
  content='files',
  content_rowid='rowid'
);
INSERT INTO files_fts(files_fts) VALUES ('rebuild');

CREATE TRIGGER files_fts_insert AFTER INSERT ON files BEGIN
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;

CREATE TRIGGER files_fts_delete AFTER DELETE ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.rowid, old.fts_text);
END;

CREATE TRIGGER files_fts_update AFTER UPDATE OF fts_text ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.rowid, old.fts_text);
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;

-- edges: nothing references it, so a plain copy loses nothing.
CREATE TABLE edges_next (
  src_path     TEXT NOT NULL,
  rel          TEXT NOT NULL,
  dst_path     TEXT NOT NULL,
  -- Task topology is working state: its class keeps `blocks` out of every memory-graph query.
  edge_class   TEXT NOT NULL DEFAULT 'memory'
               CHECK (edge_class IN ('memory','person','provenance','task')),
  derived      INTEGER NOT NULL DEFAULT 0 CHECK (derived IN (0,1)),
  strength     REAL NOT NULL DEFAULT 1.0 CHECK (strength BETWEEN 0 AND 1),
  provenance   TEXT NOT NULL DEFAULT 'authored'
               CHECK (provenance IN ('authored','sleep','import')),
  sleep_run    TEXT,
  src_hash     TEXT,
  dst_hash     TEXT,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (src_path, rel, dst_path),
  CHECK (src_path <> dst_path),
  CHECK (edge_class <> 'memory' OR rel IN (
    'supersedes','contradicts','caused_by','leads_to','part_of',
    'relates_to','example_of','supports','laterally_related')),
  CHECK (edge_class <> 'person'  OR rel IN ('about_person','authored_by')),
  CHECK (edge_class <> 'provenance' OR rel IN ('from_session')),
  CHECK (edge_class <> 'task' OR rel IN ('blocks','subtask_of')),
  CHECK (derived = 0 OR provenance = 'sleep')
);

INSERT INTO edges_next
  SELECT src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run,
         src_hash, dst_hash, created_at
  FROM edges;

DROP TABLE edges;
ALTER TABLE edges_next RENAME TO edges;

CREATE INDEX edges_src ON edges (src_path, edge_class) WHERE derived = 0;
CREATE INDEX edges_dst ON edges (dst_path, edge_class) WHERE derived = 0;
CREATE INDEX edges_rel ON edges (rel, edge_class);
CREATE INDEX edges_derived ON edges (derived, rel);
