// Graph view: entities each chunk mentions, most mentions first, at most $limit each, with how many there are. Params: $ids [string], $limit int.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})-[m:MENTIONS]->(e:Entity)
WITH cid, e, m
ORDER BY m.count DESC, e.freq DESC, e.id
WITH cid, collect({id: e.id, name: e.name, freq: e.freq, count: m.count}) AS es
RETURN cid AS chunk, size(es) AS total, es[..$limit] AS entities
