-- headd index.db, migration 12: "what became of the memory that lived at P" without a scan.
-- Partial (only archived rows carry origin_path) and not unique (one path can be archived twice).

CREATE INDEX files_origin ON files (origin_path) WHERE origin_path IS NOT NULL;
