// Distinct relations over every sample of a KG dataset (its vocabulary when none was stored). Params: $name string.
MATCH (s:KGSample)
WHERE s.dataset = $name
UNWIND s.relations AS r
RETURN DISTINCT r AS relation
