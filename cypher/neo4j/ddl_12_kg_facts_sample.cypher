// Range index on KGFacts.sample (sample key), to fetch or delete a sample's facts. Params: none.
CREATE INDEX kg_facts_sample IF NOT EXISTS FOR (f:KGFacts) ON (f.sample)
