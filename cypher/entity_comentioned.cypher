// Entities sharing a chunk with any of the given entities (whose CO_OCCURS counts a merge changes). Params: $ids [string].
UNWIND $ids AS eid
MATCH (:Entity {id: eid})<-[:MENTIONS]-(:Chunk)-[:MENTIONS]->(n:Entity)
RETURN DISTINCT n.id AS id
