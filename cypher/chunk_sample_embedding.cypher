// Any one stored chunk embedding (dimension probe). Params: none.
MATCH (c:Chunk)
WHERE c.embedding IS NOT NULL
RETURN c.embedding AS embedding
LIMIT 1
