// Delete the given Sources when no chunk of their file is left. Params: $rows [{id, path}].
UNWIND $rows AS r
MATCH (s:Source {id: r.id})
OPTIONAL MATCH (c:Chunk {source: r.path})
WITH s, count(c) AS n
WHERE n = 0
DELETE s
RETURN count(*) AS deleted
