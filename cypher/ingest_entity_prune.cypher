// Delete orphan Entities (no chunk mentions them) among the given ids. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
WHERE e.freq = 0
DETACH DELETE e
RETURN count(*) AS deleted
