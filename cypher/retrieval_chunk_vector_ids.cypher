// Ids of the chunks that have an embedding (the in-process vector index's refresh). Params: none.
MATCH (c:Chunk)
WHERE c.embedding IS NOT NULL
RETURN c.id AS id
