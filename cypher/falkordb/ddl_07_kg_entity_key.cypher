// Range index on KGEntity.key ("<dataset>/<name>"), reserved for KG triples. Params: none.
CREATE INDEX FOR (e:KGEntity) ON (e.key)
