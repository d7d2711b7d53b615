// Range index on KGEntity.lkey ("<dataset>/<folded name>"), whole-graph case-insensitive lookup. Params: none.
CREATE INDEX kg_entity_lkey IF NOT EXISTS FOR (e:KGEntity) ON (e.lkey)
