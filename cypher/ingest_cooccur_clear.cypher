// Remove the outgoing CO_OCCURS edges of the given entities (before recomputing). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (a:Entity {id: r.id})-[x:CO_OCCURS]->(:Entity)
DELETE x
RETURN count(*) AS deleted
