// Set (Chunk)-[:MENTIONS {count, surfaces, surface_counts}]->(Entity) edges (surface forms as written, with counts). Params: $rows [{chunk, entity, count, surfaces: [string], surface_counts: [int]}].
UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk})
MATCH (e:Entity {id: r.entity})
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = r.count, m.surfaces = r.surfaces, m.surface_counts = r.surface_counts
RETURN count(m) AS written
