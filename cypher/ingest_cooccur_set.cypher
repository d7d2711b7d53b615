// Set (Entity)-[:CO_OCCURS {count, pmi}]->(Entity) edges, lower id -> higher id. Params: $rows [{a, b, count, pmi}].
UNWIND $rows AS r
MATCH (a:Entity {id: r.a})
MATCH (b:Entity {id: r.b})
MERGE (a)-[x:CO_OCCURS]->(b)
SET x.count = r.count, x.pmi = r.pmi
RETURN count(x) AS written
