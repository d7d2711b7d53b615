// Entity ids mentioned by every chunk (bounded co-occurrence recompute). Params: none.
MATCH (c:Chunk)-[:MENTIONS]->(e:Entity)
RETURN c.id AS chunk, collect(e.id) AS entities
