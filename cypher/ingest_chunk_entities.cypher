// Entity ids mentioned by each of the given chunks. Params: $ids [string].
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})-[:MENTIONS]->(e:Entity)
RETURN c.id AS chunk, collect(e.id) AS entities
