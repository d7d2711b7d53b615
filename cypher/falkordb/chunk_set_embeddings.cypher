// Set Chunk.embedding vectors (vecf32) in a batch. Params: $rows [{id, embedding: [float]}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})
SET c.embedding = vecf32(r.embedding)
RETURN count(c) AS updated
