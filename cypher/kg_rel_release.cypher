// Remove samples' triples from the whole graph: decrement KG_REL.samples, delete at zero. Params: $rows [{h, r, t, n}] (entity keys, n = samples releasing it; rows distinct).
UNWIND $rows AS x
MATCH (h:KGEntity {key: x.h})-[r:KG_REL {relation: x.r}]->(t:KGEntity {key: x.t})
SET r.samples = r.samples - x.n
WITH r
WHERE r.samples <= 0
DELETE r
