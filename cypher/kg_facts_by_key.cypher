// Fact buckets by key (<sample key>|<bucket>), as ONE row: found = [{key, facts}] (a key without a bucket is absent). One row of a list instead of a row per bucket: Neo4j's Python driver costs ~13 us per record against ~3 per list entry, and the server less too (bench numbers in docs/BENCHMARKS.md). Params: $keys [string].
UNWIND $keys AS k
MATCH (f:KGFacts {key: k})
RETURN collect({key: k, facts: f.facts}) AS found
