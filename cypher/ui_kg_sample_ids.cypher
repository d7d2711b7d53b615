// UI: sample ids of one KG dataset starting with a prefix, sorted, at most $limit. Params: $dataset string, $prefix string, $limit int.
MATCH (s:KGSample)
WHERE s.dataset = $dataset AND s.sample_id STARTS WITH $prefix
RETURN s.sample_id AS sample_id, s.n_triples AS n_triples
ORDER BY sample_id
LIMIT $limit
