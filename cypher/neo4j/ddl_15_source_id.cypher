// Unique Source.id (one Source per ingested file; constraint + backing index). Params: none.
CREATE CONSTRAINT source_id IF NOT EXISTS FOR (s:Source) REQUIRE s.id IS UNIQUE
