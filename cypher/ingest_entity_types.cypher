// Set the type LLM extraction gave an entity (a value of NEORAG_INGEST_ENTITY_TYPES). Params: $rows [{id, type}].
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
SET e.type = r.type
RETURN count(e) AS written
