// Link consecutive chunks of a document. Params: $rows [{a, b}] (chunk ids, a before b).
UNWIND $rows AS r
MATCH (a:Chunk {id: r.a})
MATCH (b:Chunk {id: r.b})
MERGE (a)-[:NEXT]->(b)
RETURN count(*) AS linked
