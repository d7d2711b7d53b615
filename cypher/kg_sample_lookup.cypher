// KG samples by key (existence, relation set, size, number of fact buckets). Params: $keys [string].
UNWIND $keys AS k
MATCH (s:KGSample {key: k})
RETURN k AS key, s.n_triples AS n_triples, s.relations AS relations, s.facts_buckets AS buckets
