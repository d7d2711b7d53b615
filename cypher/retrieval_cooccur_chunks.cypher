// Chunks of the entities co-occurring with the given ones (2 hops), most mentions first, then by id. Params: $ids [string], $per_entity, $max_freq.
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})-[co:CO_OCCURS]-(n:Entity)
WITH e, n, co
WHERE NOT n.id IN $ids AND coalesce(n.freq, 1) <= $max_freq
WITH e, n, co ORDER BY co.count DESC, n.id
WITH e, collect(n)[..$per_entity] AS nbrs
UNWIND nbrs AS n
MATCH (n)<-[m:MENTIONS]-(c:Chunk)
WITH e, n, c ORDER BY m.count DESC, c.id
WITH e, n, collect(c.id)[..$per_entity] AS cids
UNWIND cids AS cid
RETURN e.id AS entity, n.id AS via, cid AS id
