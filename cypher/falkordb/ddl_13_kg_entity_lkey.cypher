// Range index on KGEntity.lkey ("<dataset>/<folded name>"), whole-graph case-insensitive lookup. Params: none.
CREATE INDEX FOR (e:KGEntity) ON (e.lkey)
