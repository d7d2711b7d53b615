// Range index on KGFacts.sample (sample key), to fetch or delete a sample's facts. Params: none.
CREATE INDEX FOR (f:KGFacts) ON (f.sample)
