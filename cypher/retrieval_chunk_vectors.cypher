// The embeddings of the given chunks (the in-process vector index loads them a page at a time). Params: $ids.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WHERE c.embedding IS NOT NULL
RETURN c.id AS id, c.embedding AS embedding
