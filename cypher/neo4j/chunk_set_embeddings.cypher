// Set Chunk.embedding vectors in a batch. Params: $rows [{id, embedding: [float]}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})
CALL db.create.setNodeVectorProperty(c, 'embedding', r.embedding)
RETURN count(c) AS updated
