// Chunks mentioning each entity, most mentions first, at most $per_entity per entity. Params: $ids [string], $per_entity.
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})<-[m:MENTIONS]-(c:Chunk)
WITH e, c, m ORDER BY m.count DESC, c.id
WITH e, collect(c.id)[..$per_entity] AS cids
UNWIND cids AS cid
RETURN e.id AS entity, e.name AS name, cid AS id
