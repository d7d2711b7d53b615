// Range index on KGFacts.key ("<dataset>/<sample_id>|<bucket>"), per-sample entity fact buckets. Params: none.
CREATE INDEX FOR (f:KGFacts) ON (f.key)
