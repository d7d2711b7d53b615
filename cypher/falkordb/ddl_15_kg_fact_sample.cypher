// Range index on KG_FACT.sample (sample key): a sample's fact edges, found for --replace. Params: none.
CREATE INDEX FOR ()-[f:KG_FACT]-() ON (f.sample)
