-- The trace plane in index.db: an index over Claude Code transcripts (~/.claude/projects).
-- The schema is memhtml 0.15.1's, column for column, so a store's index.db stays readable by that
-- tool. Every column is a pointer or a short head of text, never a copy of a conversation.
-- Retrieval over memories never reads these tables.

CREATE TABLE traces (
  session_id   TEXT PRIMARY KEY,
  -- The projects/<slug> directory name (a path slug made from the cwd), never the record field
  -- `slug`, which is a title slug.
  slug         TEXT NOT NULL,
  cwd          TEXT,
  git_branch   TEXT,
  entrypoint   TEXT,
  model        TEXT,
  version      TEXT,
  started_at   TEXT,
  ended_at     TEXT,
  prompt_count INTEGER NOT NULL DEFAULT 0,
  turn_count   INTEGER NOT NULL DEFAULT 0,
  agent_count  INTEGER NOT NULL DEFAULT 0,
  first_prompt TEXT NOT NULL DEFAULT '',
  ai_title     TEXT,
  -- Always the main transcript; subagent files feed the same row but never own the citation.
  file_path    TEXT NOT NULL,
  file_size    INTEGER NOT NULL,
  file_mtime   TEXT NOT NULL,
  -- first_prompt and ai_title joined by a newline: one column for FTS5 to rank.
  search_text  TEXT NOT NULL DEFAULT '',
  indexed_at   TEXT NOT NULL
);
CREATE INDEX traces_slug    ON traces (slug);
CREATE INDEX traces_cwd     ON traces (cwd);
CREATE INDEX traces_started ON traces (started_at);
CREATE INDEX traces_mtime   ON traces (file_mtime);

-- External-content FTS5 over traces.search_text, kept in step by the three triggers.
CREATE VIRTUAL TABLE traces_fts USING fts5(
  search_text,
  content='traces',
  content_rowid='rowid'
);

CREATE TRIGGER traces_fts_insert AFTER INSERT ON traces BEGIN
  INSERT INTO traces_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TRIGGER traces_fts_delete AFTER DELETE ON traces BEGIN
  INSERT INTO traces_fts(traces_fts, rowid, search_text)
    VALUES ('delete', old.rowid, old.search_text);
END;

CREATE TRIGGER traces_fts_update AFTER UPDATE OF search_text ON traces BEGIN
  INSERT INTO traces_fts(traces_fts, rowid, search_text)
    VALUES ('delete', old.rowid, old.search_text);
  INSERT INTO traces_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TABLE trace_prompts (
  session_id TEXT NOT NULL REFERENCES traces (session_id) ON DELETE CASCADE,
  prompt_id  TEXT NOT NULL,
  turn_uuid  TEXT NOT NULL,
  -- 0-based, first-appearance order within one session only.
  ordinal    INTEGER NOT NULL,
  at         TEXT NOT NULL,
  agent_id   TEXT,
  -- At most 200 characters: an index entry, not the prompt.
  text_head  TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (session_id, prompt_id)
);
CREATE INDEX trace_prompts_uuid ON trace_prompts (session_id, turn_uuid);

-- Written when a memory is written, read, corrected or reinforced inside a session (the index
-- recorder), not by the scanner. No foreign key to traces: a memory may be written in a session
-- whose transcript has not been scanned yet, and the link must not be lost for that.
CREATE TABLE memory_session_links (
  path       TEXT NOT NULL,
  session_id TEXT NOT NULL,
  prompt_id  TEXT,
  turn_uuid  TEXT,
  link_kind  TEXT NOT NULL CHECK (link_kind IN ('wrote','read','corrected','reinforced')),
  at         TEXT NOT NULL,
  PRIMARY KEY (path, session_id, link_kind, at)
);
CREATE INDEX msl_session ON memory_session_links (session_id);
CREATE INDEX msl_path    ON memory_session_links (path);
