// Set (Chunk)-[:RELATES_TO {weight, shared}]->(Chunk) edges (earlier -> later). Params: $rows [{a, b, weight, shared}].
UNWIND $rows AS r
MATCH (a:Chunk {id: r.a})
MATCH (b:Chunk {id: r.b})
MERGE (a)-[x:RELATES_TO]->(b)
SET x.weight = r.weight, x.shared = r.shared
RETURN count(x) AS written
