-- headd index.db, migration 3: the lexical index. External-content FTS5 over the one column
-- files.fts_text (title, gist, body), kept in step with `files` by the three triggers: FTS5 does
-- not watch its content table, and a delete must pass the OLD text to unindex it.

CREATE VIRTUAL TABLE files_fts USING fts5(
  fts_text,
  content='files',
  content_rowid='rowid'
);

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
