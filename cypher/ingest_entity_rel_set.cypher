// Add chunks to the provenance of (Entity)-[:REL {type, chunks, count}]->(Entity) edges. Params: $rows [{a, b, type, chunks: [string]}].
UNWIND $rows AS r
MATCH (a:Entity {id: r.a})
MATCH (b:Entity {id: r.b})
MERGE (a)-[x:REL {type: r.type}]->(b)
WITH x, coalesce(x.chunks, []) AS old, r.chunks AS added
WITH x, old + [c IN added WHERE NOT c IN old] AS chunks
SET x.chunks = chunks, x.count = size(chunks)
RETURN count(x) AS written
