-- headd index.db, migration 11: edges_src / edges_dst over every row. A partial index on
-- `derived = 0` is no candidate for a walk filtering on edge_class alone, so the predicate goes.
-- IF EXISTS on the drops so the file converges from a store where an index was dropped by hand.

DROP INDEX IF EXISTS edges_src;
DROP INDEX IF EXISTS edges_dst;

CREATE INDEX edges_src ON edges (src_path, edge_class);
CREATE INDEX edges_dst ON edges (dst_path, edge_class);
