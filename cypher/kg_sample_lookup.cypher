// KG samples by key (existence, relation set, size). Params: $keys [string].
UNWIND $keys AS k
MATCH (s:KGSample {key: k})
RETURN k AS key, s.n_triples AS n_triples, s.relations AS relations
