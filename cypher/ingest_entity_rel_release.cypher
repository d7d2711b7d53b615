// Drop the given chunks from entity REL provenance; delete edges no chunk supports any more. Params: $rows [{id}].
UNWIND $rows AS r
MATCH (:Chunk {id: r.id})-[:MENTIONS]->(:Entity)-[x:REL]->(:Entity)
WHERE r.id IN x.chunks
WITH x, collect(DISTINCT r.id) AS gone
WITH x, [c IN x.chunks WHERE NOT c IN gone] AS rest
SET x.chunks = rest, x.count = size(rest)
WITH x, rest
WHERE size(rest) = 0
DELETE x
RETURN count(*) AS deleted
