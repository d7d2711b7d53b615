// Chunks sharing a non-hub entity with a seed chunk (rarest entities first; per entity most mentions, then id). Params: $ids, $per_entity, $max_freq, $max_entities.
UNWIND $ids AS sid
MATCH (s:Chunk {id: sid})-[:MENTIONS]->(e:Entity)
WITH sid, e
WHERE coalesce(e.freq, 1) > 1 AND coalesce(e.freq, 1) <= $max_freq
WITH sid, e ORDER BY e.freq ASC, e.id
WITH sid, collect(e)[..$max_entities] AS es
UNWIND es AS e
MATCH (e)<-[m:MENTIONS]-(c:Chunk)
WITH sid, e, c, m
WHERE c.id <> sid
WITH sid, e, c ORDER BY m.count DESC, c.id
WITH sid, e, collect(c.id)[..$per_entity] AS cids
UNWIND cids AS cid
RETURN sid AS src, e.id AS entity, e.name AS name, e.freq AS freq, cid AS id
