// Existing REL edges between given chunk pairs (either direction). Params: $rows [{a, b}].
UNWIND $rows AS r
MATCH (a:Chunk {id: r.a})-[x:REL]-(b:Chunk {id: r.b})
RETURN startNode(x).id AS a, endNode(x).id AS b, x.type AS type
