// Remove RELATES_TO edges touching the given chunks (before recomputing). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})-[x:RELATES_TO]-(:Chunk)
DELETE x
RETURN count(*) AS deleted
