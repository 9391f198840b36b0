-- headd index.db, migration 100 (headd's own, not memhtml's): each memory's body is stored once.
--
-- memhtml's schema stores the body three times: files.body_text, files.fts_text (title, gist and
-- body joined) and chunks.text (the body cut into chunks). Here:
--   * files.fts_text becomes a VIRTUAL generated column, computed on read from title, gist and
--     body_text exactly as the parser joins them (headd.memfile.text.fts_text_of): no bytes on
--     disk, the same value for every reader, and FTS5's external content reads it as before;
--   * chunks becomes a view over chunk_spans, whose rows hold where each chunk lies in its file's
--     body_text (start, a code-point offset, and span_length) instead of the text; a chunk that is
--     not a slice of the body (a hard cut that split a surrogate pair) keeps its text in own_text;
--   * the chunks_hash index goes: chunk_spans_hash_ord leads with the same column.
-- `SELECT * FROM files` and `SELECT * FROM chunks` still give memhtml's columns, in its order, row
-- for row. The files_fts update trigger names the columns fts_text is made of, since an UPDATE
-- never names a generated column.
--
-- Every rowid of files is kept (INSERT ... SELECT rowid), so files_fts, whose rowids are those of
-- files, stays valid as it is. As in migration 8, DROP TABLE on a parent with foreign keys on
-- deletes its children by cascade, so the children are copied aside and back.

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
  -- Title, gist and body joined by newlines, empty parts dropped.
  fts_text        TEXT GENERATED ALWAYS AS (substr(
                    iif(title <> '', char(10) || title, '')
                    || iif(gist <> '', char(10) || gist, '')
                    || iif(body_text <> '', char(10) || body_text, ''), 2)) VIRTUAL,
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
  due_at          TEXT,
  frame_key       TEXT
);

INSERT INTO files_next (rowid, path, blob_sha, content_hash, memory_type, title, body_text, gist,
         disclosure_text, para, workspace, confidence, importance, archived, origin_path,
         word_count, created_at, updated_at, event_at, archived_at, valid_from, valid_until,
         reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, indexed_at,
         task_status, due_at, frame_key)
  SELECT rowid, path, blob_sha, content_hash, memory_type, title, body_text, gist,
         disclosure_text, para, workspace, confidence, importance, archived, origin_path,
         word_count, created_at, updated_at, event_at, archived_at, valid_from, valid_until,
         reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, indexed_at,
         task_status, due_at, frame_key
  FROM files ORDER BY rowid;

-- Where each chunk lies in its body, worked out while the old chunks and files both exist. instr
-- finds the first place the chunk's text occurs; any place holding the same text serves.
CREATE TEMP TABLE keep_chunk_spans AS
  SELECT rid, chunk_id, path, content_hash, ordinal,
         iif(at > 0, at - 1, NULL) AS start, iif(at > 0, length(text), NULL) AS span_length,
         iif(at > 0, NULL, text) AS own_text, char_count
  FROM (SELECT c.rowid AS rid, c.chunk_id, c.path, c.content_hash, c.ordinal, c.text,
               c.char_count, iif(c.text <> '', coalesce(instr(f.body_text, c.text), 0), 0) AS at
        FROM chunks c LEFT JOIN files f ON f.path = c.path);

CREATE TEMP TABLE keep_file_tags      AS SELECT * FROM file_tags;
CREATE TEMP TABLE keep_file_entities  AS SELECT * FROM file_entities;
CREATE TEMP TABLE keep_file_facets    AS SELECT * FROM file_facets;
CREATE TEMP TABLE keep_file_citations AS SELECT * FROM file_citations;
CREATE TEMP TABLE keep_embeddings     AS SELECT * FROM embeddings;

DROP TABLE embeddings;
DROP TABLE chunks;
DROP TABLE files;
ALTER TABLE files_next RENAME TO files;

INSERT INTO file_tags      SELECT * FROM keep_file_tags;
INSERT INTO file_entities  SELECT * FROM keep_file_entities;
INSERT INTO file_facets    SELECT * FROM keep_file_facets;
INSERT INTO file_citations SELECT * FROM keep_file_citations;

CREATE TABLE chunk_spans (
  chunk_id     TEXT PRIMARY KEY,            -- sha256(content_hash || ':' || ordinal)
  path         TEXT NOT NULL REFERENCES files (path) ON DELETE CASCADE ON UPDATE CASCADE,
  content_hash TEXT NOT NULL,
  ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
  -- The chunk is substr(files.body_text, start + 1, span_length) of its path's file ...
  start        INTEGER CHECK (start >= 0),
  span_length  INTEGER CHECK (span_length >= 0),
  -- ... or, when it is no slice of the body, this text.
  own_text     TEXT,
  char_count   INTEGER NOT NULL,            -- UTF-16 code units, as memhtml counts
  CHECK ((own_text IS NULL) = (start IS NOT NULL AND span_length IS NOT NULL))
);

INSERT INTO chunk_spans (rowid, chunk_id, path, content_hash, ordinal, start, span_length,
         own_text, char_count)
  SELECT rid, chunk_id, path, content_hash, ordinal, start, span_length, own_text, char_count
  FROM keep_chunk_spans ORDER BY rid;

CREATE TABLE embeddings (
  chunk_id   TEXT PRIMARY KEY REFERENCES chunk_spans (chunk_id) ON DELETE CASCADE,
  model      TEXT NOT NULL,                 -- the vector space, `<model>@<dim>`
  dim        INTEGER NOT NULL CHECK (dim > 0),
  vec        BLOB NOT NULL,                 -- float32 little-endian
  created_at TEXT NOT NULL
);
CREATE INDEX embeddings_model ON embeddings (model);
INSERT INTO embeddings SELECT * FROM keep_embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunk_spans);

DROP TABLE keep_file_tags;
DROP TABLE keep_file_entities;
DROP TABLE keep_file_facets;
DROP TABLE keep_file_citations;
DROP TABLE keep_chunk_spans;
DROP TABLE keep_embeddings;

CREATE INDEX chunk_spans_path ON chunk_spans (path);
CREATE UNIQUE INDEX chunk_spans_hash_ord ON chunk_spans (content_hash, ordinal);

-- memhtml's chunks, row for row. A LEFT JOIN on files' primary key, so a query that reads no
-- text (the vector arm, the counts) never touches files: SQLite omits such a join.
CREATE VIEW chunks (chunk_id, path, content_hash, ordinal, text, char_count) AS
  SELECT s.chunk_id, s.path, s.content_hash, s.ordinal,
         CASE WHEN s.own_text IS NULL THEN substr(f.body_text, s.start + 1, s.span_length)
              ELSE s.own_text END,
         s.char_count
  FROM chunk_spans s LEFT JOIN files f ON f.path = s.path;

-- A dropped table takes its indexes along: every one of files' is declared again.
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
CREATE INDEX files_frame_key_active ON files (frame_key)
  WHERE archived = 0 AND memory_type <> 'task' AND frame_key IS NOT NULL;
CREATE INDEX files_origin ON files (origin_path) WHERE origin_path IS NOT NULL;

CREATE TRIGGER files_fts_insert AFTER INSERT ON files BEGIN
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;

CREATE TRIGGER files_fts_delete AFTER DELETE ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.rowid, old.fts_text);
END;

CREATE TRIGGER files_fts_update AFTER UPDATE OF title, gist, body_text ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.rowid, old.fts_text);
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
