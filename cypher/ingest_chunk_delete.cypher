// Delete chunks with all their edges. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})
DETACH DELETE c
RETURN count(*) AS deleted
