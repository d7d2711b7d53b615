// Create whole-graph KG_REL edges the loader knows are new (an end was created by this load and the edge was not written yet); entities are bound once each, edges reference them by position in $ents. Params: $ents [string] (entity keys, distinct), $rows [{h, r, t, n}] (h, t = positions in $ents, n = samples adding it; rows distinct).
UNWIND range(0, size($ents) - 1) AS i
WITH i, $ents[i] AS key
OPTIONAL MATCH (e:KGEntity {key: key})
WITH i, e ORDER BY i
WITH collect([e]) AS nodes
UNWIND $rows AS x
WITH nodes[x.h][0] AS h, nodes[x.t][0] AS t, x
WHERE h IS NOT NULL AND t IS NOT NULL
CREATE (h)-[:KG_REL {relation: x.r, samples: x.n}]->(t)
