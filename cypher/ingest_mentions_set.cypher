// Set (Chunk)-[:MENTIONS {count}]->(Entity) edges. Params: $rows [{chunk, entity, count}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk})
MATCH (e:Entity {id: r.entity})
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = r.count
RETURN count(m) AS written
