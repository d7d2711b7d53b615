// Drop the given chunks from entity REL provenance (count kept equal to the chunks left; ingest_entity_rel_prune then deletes edges left with none: FalkorDB drops this SET when a later WHERE filters every row). Params: $rows [{id}].
UNWIND $rows AS r
MATCH (:Chunk {id: r.id})-[:MENTIONS]->(:Entity)-[x:REL]->(:Entity)
WHERE r.id IN x.chunks
WITH x, collect(DISTINCT r.id) AS gone
WITH x, [c IN x.chunks WHERE NOT c IN gone] AS rest
SET x.chunks = rest, x.count = size(rest)
RETURN count(x) AS released
