// Graph view: ids of the chunks mentioning each entity, most mentions first, at most $limit each, with how many there are. Params: $ids [string], $limit int.
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})<-[m:MENTIONS]-(c:Chunk)
WITH eid, c, m
ORDER BY m.count DESC, c.id
WITH eid, collect({id: c.id, count: m.count}) AS cs
RETURN eid AS entity, size(cs) AS total, cs[..$limit] AS chunks
