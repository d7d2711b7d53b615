// Add distinct triples to the whole graph with their entities in one statement: entities are MERGEd once each, edges reference them by position in $ents (no index lookup per edge); KG_REL.samples counts the samples holding each. Params: $ents [{key, lkey, name}] (distinct), $rows [{h, r, t, n}] (h, t = positions in $ents, n = samples adding it; rows distinct), $dataset string.
UNWIND range(0, size($ents) - 1) AS i
WITH i, $ents[i] AS ent
MERGE (e:KGEntity {key: ent.key})
ON CREATE SET e.name = ent.name, e.lkey = ent.lkey, e.dataset = $dataset
WITH i, e ORDER BY i
WITH collect(e) AS nodes
UNWIND $rows AS x
WITH nodes[x.h] AS h, nodes[x.t] AS t, x
MERGE (h)-[r:KG_REL {relation: x.r}]->(t)
SET r.dataset = $dataset, r.samples = coalesce(r.samples, 0) + x.n
