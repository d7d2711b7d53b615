// Record a load on a KG dataset: counts and a new generation token (read caches compare it); a new dataset gets the next load-order number. Params: $name string, $samples int, $triples int, $generation string.
OPTIONAL MATCH (x:KGDataset)
WITH count(x) AS n
MERGE (d:KGDataset {name: $name})
ON CREATE SET d.n_samples = 0, d.n_triples = 0, d.seq = n
SET d.n_samples = d.n_samples + $samples, d.n_triples = d.n_triples + $triples, d.generation = $generation
