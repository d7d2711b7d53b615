// Unique KGFacts.key ("<dataset>/<sample_id>|<name>"), per-sample entity facts. Params: none.
CREATE CONSTRAINT kg_facts_key IF NOT EXISTS FOR (f:KGFacts) REQUIRE f.key IS UNIQUE
