// KG samples by key with the fact buckets of the names a batch asks for, in one round trip and ONE row: samples = [{key, n_triples, relations, buckets, found: [[bucket, facts]]}] (a sample not loaded is absent; one row of a list, see kg_facts_by_key). A bucket is crc32(folded name) mod the sample's bucket count (app/kg/keys.py), computed here because the count is stored on the sample. Params: $samples [{s: sample key, h: [int] (crc32 of the folded names; may be empty)}].
UNWIND $samples AS x
MATCH (s:KGSample {key: x.s})
WITH x, s, coalesce(s.facts_buckets, 1) AS n
UNWIND CASE WHEN size(x.h) = 0 THEN [null] ELSE x.h END AS h
WITH DISTINCT x.s AS key, s, CASE WHEN h IS NULL THEN null WHEN n > 1 THEN h % n ELSE 0 END AS b
OPTIONAL MATCH (f:KGFacts {key: key + '|' + toString(b)})
WITH key, s, collect([b, f.facts]) AS found
RETURN collect({key: key, n_triples: s.n_triples, relations: s.relations, buckets: s.facts_buckets,
                found: found}) AS samples
