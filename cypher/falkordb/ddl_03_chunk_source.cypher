// Range index on Chunk.source (incremental ingest scans by file). Params: none.
CREATE INDEX FOR (c:Chunk) ON (c.source)
