// Unique KGSample.key ("<dataset>/<sample_id>"), reserved for KG triples. Params: none.
CREATE CONSTRAINT kg_sample_key IF NOT EXISTS FOR (s:KGSample) REQUIRE s.key IS UNIQUE
