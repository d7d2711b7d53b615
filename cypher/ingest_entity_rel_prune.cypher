// Delete entity REL edges no chunk supports any more, among those of the entities the given chunks mention (after ingest_entity_rel_release). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (:Chunk {id: r.id})-[:MENTIONS]->(:Entity)-[x:REL]->(:Entity)
WHERE x.count = 0
WITH DISTINCT x
DELETE x
RETURN count(*) AS deleted
