// Graph view: chunks joined to each chunk by NEXT, RELATES_TO or REL (either direction), strongest first, at most $limit each, with how many there are. Params: $ids [string], $limit int.
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})-[r:NEXT|RELATES_TO|REL]-(n:Chunk)
WITH cid, n, r
ORDER BY coalesce(r.confidence, 0.0) + coalesce(r.weight, 0.0) DESC, n.id
WITH cid, collect({id: n.id, type: type(r), out: startNode(r).id = cid, weight: r.weight, shared: r.shared,
                   rel_type: r.type, confidence: r.confidence}) AS ns
RETURN cid AS src, size(ns) AS total, ns[..$limit] AS neighbours
