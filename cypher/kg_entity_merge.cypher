// Create whole-graph KG entities once per dataset name. Params: $rows [{key, lkey, name}], $dataset string.
UNWIND $rows AS r
MERGE (e:KGEntity {key: r.key})
ON CREATE SET e.name = r.name, e.lkey = r.lkey, e.dataset = $dataset
