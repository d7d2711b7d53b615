// Delete samples' KG_FACT edges (before --replace rewrites them). Params: $samples [string] (sample keys).
UNWIND $samples AS s
MATCH ()-[f:KG_FACT {sample: s}]->()
DELETE f
