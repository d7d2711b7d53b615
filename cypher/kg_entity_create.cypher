// Create whole-graph KG entities the loader checked are absent (kg_entity_existing). Params: $rows [{key, lkey, name}], $dataset string.
UNWIND $rows AS r
CREATE (:KGEntity {key: r.key, name: r.name, lkey: r.lkey, dataset: $dataset})
