// Fact buckets by key (<sample key>|<bucket>), as ONE row: found = [{key, facts}] (a key without a bucket is absent). One row of a list instead of a row per bucket: Neo4j's Python driver costs ~14 us per record against 3-7 per list entry, and the server less too (bench/kg_read_shape.py, docs/BENCHMARKS.md). Params: $keys [string].
UNWIND $keys AS k
MATCH (f:KGFacts {key: k})
RETURN collect({key: k, facts: f.facts}) AS found
