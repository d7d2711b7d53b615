// Evidence graph: for each chunk, entities it mentions that CO_OCCUR with one of the given (question) entities, strongest first, at most $limit per chunk. Params: $chunks [string], $entities [string], $limit int.
UNWIND $chunks AS cid
MATCH (c:Chunk {id: cid})-[:MENTIONS]->(n:Entity)-[co:CO_OCCURS]-(e:Entity)
WHERE e.id IN $entities AND NOT n.id IN $entities
WITH cid, n, e, co
ORDER BY co.count DESC, n.id
WITH cid, collect({id: n.id, name: n.name, freq: n.freq, entity: e.id, count: co.count})[..$limit] AS paths
UNWIND paths AS p
RETURN cid AS chunk, p.id AS id, p.name AS name, p.freq AS freq, p.entity AS entity, p.count AS count
