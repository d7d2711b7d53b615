// Delete the given Documents when no chunk is left under them. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (d:Document {id: r.id})
OPTIONAL MATCH (d)-[h:HAS_CHUNK]->(:Chunk)
WITH d, count(h) AS n
WHERE n = 0
DETACH DELETE d
RETURN count(*) AS deleted
