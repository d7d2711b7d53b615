// Recompute Entity.freq = number of chunks mentioning it. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
OPTIONAL MATCH (:Chunk)-[m:MENTIONS]->(e)
WITH e, count(m) AS n
SET e.freq = n
RETURN count(e) AS updated
