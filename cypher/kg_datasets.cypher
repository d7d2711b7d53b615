// Every loaded KG dataset with its sample and triple counts. Params: none.
MATCH (d:KGDataset)
RETURN d.name AS name, d.n_samples AS samples, d.n_triples AS triples
ORDER BY name
