// Entities mentioned by each chunk (CONVINSE text evidences). Params: $ids [string] (chunk ids).
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})-[:MENTIONS]->(e:Entity)
RETURN cid AS id, collect({id: e.id, name: e.name}) AS entities
