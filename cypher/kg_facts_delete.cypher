// Delete the fact nodes of samples (before --replace rewrites them). Params: $samples [string] (sample keys).
UNWIND $samples AS s
MATCH (f:KGFacts {sample: s})
DELETE f
