// Every fact bucket of whole samples (each triple appears under its head and under its tail). Params: $samples [string] (sample keys).
UNWIND $samples AS s
MATCH (f:KGFacts {sample: s})
RETURN s AS sample, f.facts AS facts
