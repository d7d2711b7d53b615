// Unique KGFacts.key ("<dataset>/<sample_id>|<bucket>"), per-sample entity fact buckets. Params: none.
CREATE CONSTRAINT kg_facts_key IF NOT EXISTS FOR (f:KGFacts) REQUIRE f.key IS UNIQUE
