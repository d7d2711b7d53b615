// Range index on KGFacts.key ("<dataset>/<sample_id>|<name>"), per-sample entity facts. Params: none.
CREATE INDEX FOR (f:KGFacts) ON (f.key)
