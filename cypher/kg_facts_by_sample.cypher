// Outgoing facts of whole samples (every triple once). Params: $samples [string] (sample keys).
UNWIND $samples AS s
MATCH (f:KGFacts {sample: s})
RETURN s AS sample, f.name AS name, f.out_rel AS out_rel, f.out_ent AS out_ent
