// Drop the Chunk.embedding vector index (re-embedding with another dimension). Params: none.
DROP VECTOR INDEX FOR (c:Chunk) ON (c.embedding)
