// Record a load on a KG dataset: counts and a new generation token (read caches compare it). Params: $name string, $samples int, $triples int, $generation string.
MERGE (d:KGDataset {name: $name})
ON CREATE SET d.n_samples = 0, d.n_triples = 0
SET d.n_samples = d.n_samples + $samples, d.n_triples = d.n_triples + $triples, d.generation = $generation
