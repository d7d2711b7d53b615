// The stored embedding of one chunk (dimension checks). Params: $id.
MATCH (c:Chunk {id: $id})
RETURN c.embedding AS embedding
