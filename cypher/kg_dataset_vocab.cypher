// Store a KG dataset's relation vocabulary (KG-R1 relations.txt) with a new generation token (read caches compare it); a new dataset gets the next load-order number. Params: $name string, $relations [string], $generation string.
OPTIONAL MATCH (x:KGDataset)
WITH count(x) AS n
MERGE (d:KGDataset {name: $name})
ON CREATE SET d.n_samples = 0, d.n_triples = 0, d.seq = n
SET d.relation_vocab = $relations, d.generation = $generation
