// Range index on KG_FACT.sample (sample key): a sample's fact edges for Browser and --replace. Params: none.
CREATE INDEX kg_fact_sample IF NOT EXISTS FOR ()-[f:KG_FACT]-() ON (f.sample)
