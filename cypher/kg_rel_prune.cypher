// Delete whole-graph KG_REL edges no sample holds any more (after kg_rel_release). Params: $rows [{h, r, t}] (entity keys).
UNWIND $rows AS x
MATCH (h:KGEntity {key: x.h})
MATCH (t:KGEntity {key: x.t})
MATCH (h)-[r:KG_REL]->(t)
WHERE r.relation = x.r AND r.samples <= 0
DELETE r
