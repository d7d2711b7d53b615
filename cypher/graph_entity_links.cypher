// Graph view: each entity's outgoing CO_OCCURS edges (stored from the lower id to the higher), most shared chunks first, at most $limit each; the caller keeps those between shown entities. Params: $ids [string], $limit int.
UNWIND $ids AS a
MATCH (x:Entity {id: a})-[co:CO_OCCURS]->(y:Entity)
WITH a, y, co
ORDER BY co.count DESC, y.id
WITH a, collect({id: y.id, count: co.count}) AS ys
RETURN a AS source, size(ys) AS total, ys[..$limit] AS targets
