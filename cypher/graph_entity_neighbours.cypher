// Graph view: CO_OCCURS neighbours of each entity, most shared chunks first, at most $limit each, with how many there are. Params: $ids [string], $limit int.
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})-[co:CO_OCCURS]-(n:Entity)
WITH eid, n, co
ORDER BY co.count DESC, n.id
WITH eid, collect({id: n.id, name: n.name, freq: n.freq, count: co.count}) AS ns
RETURN eid AS src, size(ns) AS total, ns[..$limit] AS neighbours
