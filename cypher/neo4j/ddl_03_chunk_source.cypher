// Range index on Chunk.source (incremental ingest scans by file). Params: none.
CREATE INDEX chunk_source IF NOT EXISTS FOR (c:Chunk) ON (c.source)
