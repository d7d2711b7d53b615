// Add distinct triples to the whole graph; KG_REL.samples counts the samples holding each. Params: $rows [{h, r, t, n}] (entity keys, n = samples adding it; rows distinct).
UNWIND $rows AS x
MATCH (h:KGEntity {key: x.h})
MATCH (t:KGEntity {key: x.t})
MERGE (h)-[r:KG_REL {relation: x.r}]->(t)
SET r.samples = coalesce(r.samples, 0) + x.n
