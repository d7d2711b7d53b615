// RELATES_TO and REL neighbours of seed chunks, strongest first, $per_seed each. Params: $ids [string], $per_seed.
UNWIND $ids AS sid
MATCH (s:Chunk {id: sid})-[r:RELATES_TO|REL]-(c:Chunk)
WITH sid, c, r
WHERE c.id <> sid
WITH sid, c, r ORDER BY coalesce(r.confidence, 0.0) + coalesce(r.weight, 0.0) DESC, c.id
WITH sid, collect({id: c.id, kind: type(r), weight: r.weight, rel_type: r.type, conf: r.confidence})[..$per_seed] AS ns
UNWIND ns AS n
RETURN sid AS src, n.id AS id, n.kind AS kind, n.weight AS weight, n.rel_type AS rel_type, n.conf AS conf
