// Range index on KGSample.key ("<dataset>/<sample_id>"), reserved for KG triples. Params: none.
CREATE INDEX FOR (s:KGSample) ON (s.key)
