// Range index on Chunk.id (uniqueness is kept by MERGE on id). Params: none.
CREATE INDEX FOR (c:Chunk) ON (c.id)
