// Loaded KG dataset names in load order (KG-R1 lists its configured datasets in order). Params: none.
MATCH (d:KGDataset)
RETURN d.name AS name
ORDER BY coalesce(d.seq, -1), name
