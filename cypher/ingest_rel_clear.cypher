// Remove REL edges touching the given chunks (refresh_relations). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})-[x:REL]-(:Chunk)
DELETE x
RETURN count(*) AS deleted
