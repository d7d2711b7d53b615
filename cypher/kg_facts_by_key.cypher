// Fact buckets by key (<sample key>|<bucket>). Params: $keys [string].
UNWIND $keys AS k
MATCH (f:KGFacts {key: k})
RETURN k AS key, f.facts AS facts
