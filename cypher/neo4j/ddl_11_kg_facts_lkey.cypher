// Range index on KGFacts.lkey ("<dataset>/<sample_id>|<folded name>"), case-insensitive entity match. Params: none.
CREATE INDEX kg_facts_lkey IF NOT EXISTS FOR (f:KGFacts) ON (f.lkey)
