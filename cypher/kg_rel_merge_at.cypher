// Add whole-graph KG_REL edges that may exist already (MERGE; KG_REL.samples counts the samples holding each); entities exist and are bound once each, edges reference them by position in $ents. Params: $ents [string] (entity keys, distinct), $rows [{h, r, t, n}] (h, t = positions in $ents; rows distinct).
UNWIND range(0, size($ents) - 1) AS i
WITH i, $ents[i] AS key
OPTIONAL MATCH (e:KGEntity {key: key})
WITH i, e ORDER BY i
WITH collect([e]) AS nodes
UNWIND $rows AS x
WITH nodes[x.h][0] AS h, nodes[x.t][0] AS t, x
WHERE h IS NOT NULL AND t IS NOT NULL
MERGE (h)-[r:KG_REL {relation: x.r}]->(t)
SET r.samples = coalesce(r.samples, 0) + x.n
