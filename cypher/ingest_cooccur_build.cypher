// CO_OCCURS {count} from each given entity to higher-id entities sharing >= $min_count chunks. Params: $rows [{id}], $min_count.
UNWIND $rows AS r
MATCH (a:Entity {id: r.id})<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b:Entity)
WHERE a.id < b.id
WITH a, b, count(c) AS n
WHERE n >= $min_count
MERGE (a)-[x:CO_OCCURS]->(b)
SET x.count = n
RETURN count(x) AS edges
