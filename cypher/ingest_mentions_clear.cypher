// Remove the MENTIONS edges of the given chunks (refresh). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})-[m:MENTIONS]->(:Entity)
DELETE m
RETURN count(*) AS deleted
