// Entity merge: move each merged entity's MENTIONS to the surviving one (a chunk mentioning both keeps one edge: counts and surface forms added). Params: $rows [{source, target}].
UNWIND $rows AS r
MATCH (s:Entity {id: r.source})<-[m:MENTIONS]-(c:Chunk)
MATCH (t:Entity {id: r.target})
MERGE (c)-[m2:MENTIONS]->(t)
ON CREATE SET m2 += properties(m)
ON MATCH SET m2.count = coalesce(m2.count, 0) + coalesce(m.count, 0),
             m2.surfaces = CASE WHEN m.surfaces IS NULL THEN m2.surfaces
                                ELSE coalesce(m2.surfaces, []) + m.surfaces END,
             m2.surface_counts = CASE WHEN m.surface_counts IS NULL THEN m2.surface_counts
                                      ELSE coalesce(m2.surface_counts, []) + m.surface_counts END
DELETE m
RETURN count(*) AS moved
