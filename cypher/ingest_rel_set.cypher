// Set LLM-typed (Chunk)-[:REL {type, confidence}]->(Chunk) edges. Params: $rows [{a, b, type, confidence}].
UNWIND $rows AS r
MATCH (a:Chunk {id: r.a})
MATCH (b:Chunk {id: r.b})
MERGE (a)-[x:REL {type: r.type}]->(b)
SET x.confidence = r.confidence
RETURN count(x) AS written
