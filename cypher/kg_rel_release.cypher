// Remove samples' triples from the whole graph: decrement KG_REL.samples (kg_rel_prune then deletes those at zero). Params: $rows [{h, r, t, n}] (entity keys, n = samples releasing it; rows distinct).
UNWIND $rows AS x
MATCH (h:KGEntity {key: x.h})
MATCH (t:KGEntity {key: x.t})
MATCH (h)-[r:KG_REL]->(t)
WHERE r.relation = x.r
SET r.samples = r.samples - x.n
