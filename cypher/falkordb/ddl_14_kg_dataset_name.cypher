// Range index on KGDataset.name. Params: none.
CREATE INDEX FOR (d:KGDataset) ON (d.name)
